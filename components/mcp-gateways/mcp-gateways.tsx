"use client";

import { useState, useTransition, type FormEvent } from "react";
import {
  createMcpGatewayAction,
  disableMcpGatewayAction,
  editMcpGatewayAction,
} from "@/app/(reviewer)/mcp-gateways/actions";
import { ScrollBox } from "@/components/app-shell/scroll-box";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { RowConfirm, useConfirmRows } from "@/components/queue-settings/confirm-action";
import { FormError } from "@/components/queue-settings/form-error";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { useActionOutcome } from "@/components/queue-settings/use-action-outcome";
import { Badge } from "@/components/run-timeline/badges";
import type { McpGatewayView } from "@/lib/mcp-gateways/gateway-record";
import styles from "./mcp-gateways.module.css";

type AgentOption = { id: string; name: string };

const FIELDS = ["name", "url", "headers", "agents"] as const;

/**
 * Hosted MCP gateways: every reviewer sees them (the endpoint to give an agent, who may use it);
 * admins add, edit, disable and enable them. Header values are write-only: typed here, sent to the
 * server, stored sealed, and never shown again.
 */
export function McpGateways({
  gateways,
  agents,
  canManage,
}: {
  gateways: McpGatewayView[];
  agents: AgentOption[];
  canManage: boolean;
}) {
  const { failure, status, done } = useActionOutcome();
  const [editing, setEditing] = useState<McpGatewayView | null>(null);
  const transition = useTransition();
  const [pending, startTransition] = transition;
  const rows = useConfirmRows(transition);

  async function disable(gateway: McpGatewayView) {
    const result = await disableMcpGatewayAction(gateway.id);
    done(result, `Disabled ${gateway.name}: agents can no longer connect to it.`);
  }

  function enable(gateway: McpGatewayView) {
    startTransition(async () => {
      const result = await editMcpGatewayAction(gateway.id, {
        expectedRevision: gateway.revision,
        status: "enabled",
      });
      done(result, `Enabled ${gateway.name} again.`);
    });
  }

  return (
    <>
      <FormError failure={failure} />
      <p className={settings.status} role="status" data-testid="gateways-status">
        {status}
      </p>
      {gateways.length === 0 ? (
        <div className={settings.empty}>
          <p className={settings.emptyTitle}>No MCP gateways yet</p>
          <p className={settings.emptyText}>
            {canManage
              ? "Add a remote MCP server below; agents then connect to Countersign instead."
              : "An admin can add one."}
          </p>
        </div>
      ) : (
        <ScrollBox label="MCP gateways" className={settings.tableWrap}>
          <table className={`${settings.table} stack-table`}>
            <caption className="visually-hidden">MCP gateways</caption>
            <thead>
              <tr>
                <th scope="col">Gateway</th>
                <th scope="col">Endpoint for agents</th>
                <th scope="col">Upstream</th>
                <th scope="col">Headers</th>
                <th scope="col">Agents allowed</th>
                <th scope="col">Status</th>
                {canManage && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {gateways.map((gateway) => (
                <tr
                  key={gateway.id}
                  data-testid="gateway-row"
                  data-gateway-name={gateway.name}
                  className={gateway.status === "disabled" ? settings.muted : undefined}
                >
                  <td data-cell="name">
                    <strong>{gateway.name}</strong>
                  </td>
                  <td data-label="Endpoint for agents">
                    <code className={styles.endpoint} data-testid="gateway-endpoint">
                      {gateway.endpoint}
                    </code>
                  </td>
                  <td data-label="Upstream">
                    <code className={styles.endpoint}>{gateway.url}</code>
                  </td>
                  <td data-label="Headers">
                    {gateway.headerNames.length ? gateway.headerNames.join(", ") : "none"}
                  </td>
                  <td data-label="Agents allowed">
                    {gateway.agents.length ? gateway.agents.map((a) => a.name).join(", ") : "none"}
                  </td>
                  <td data-label="Status">
                    {gateway.status === "enabled" ? (
                      <Badge tone="ok">Enabled</Badge>
                    ) : (
                      <Badge tone="neutral">Disabled</Badge>
                    )}
                  </td>
                  {canManage && (
                    <td className={settings.actions} data-cell="actions">
                      <span className={settings.rowButtons}>
                        <button
                          type="button"
                          className={settings.secondary}
                          disabled={pending}
                          onClick={() => setEditing(gateway)}
                          aria-label={`Edit ${gateway.name}`}
                        >
                          Edit…
                        </button>
                        {gateway.status === "enabled" ? (
                          <RowConfirm
                            row={gateway.id}
                            verb="Disable"
                            ariaLabel={`Disable ${gateway.name}`}
                            rows={rows}
                            onConfirm={() => disable(gateway)}
                          />
                        ) : (
                          <button
                            type="button"
                            className={settings.secondary}
                            disabled={pending}
                            onClick={() => enable(gateway)}
                            aria-label={`Enable ${gateway.name}`}
                          >
                            Enable
                          </button>
                        )}
                      </span>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <p className={styles.details}>
        An agent connects with its own agent key as <code>Authorization: Bearer cs_agent_…</code>{" "}
        (MCP streamable HTTP). Policies see a gateway&apos;s tools as <code>name.tool</code>.
      </p>

      {canManage && editing && (
        <GatewayForm
          key={`${editing.id}-${editing.revision}`}
          gateway={editing}
          agents={agents}
          onDone={(message) => {
            setEditing(null);
            done({ ok: true }, message);
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      {canManage && !editing && (
        <GatewayForm agents={agents} onDone={(message) => done({ ok: true }, message)} />
      )}
    </>
  );
}

/** `Name: value` lines as headers, or the first line that is not one. */
function parseHeaderLines(text: string): Record<string, string> | { bad: string } {
  const headers: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (!line) continue;
    const colon = line.indexOf(":");
    if (colon <= 0) return { bad: line.length > 40 ? `${line.slice(0, 40)}…` : line };
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The new-gateway form, or the edit form of `gateway`. */
function GatewayForm({
  gateway,
  agents,
  onDone,
  onCancel,
}: {
  gateway?: McpGatewayView;
  agents: AgentOption[];
  onDone: (message: string) => void;
  onCancel?: () => void;
}) {
  const errors = useFieldErrors(FIELDS);
  const [pending, startTransition] = useTransition();
  const prefix = gateway ? "edit-gateway" : "new-gateway";
  const allowed = new Set(gateway?.agents.map((a) => a.id) ?? []);

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const headerText = String(data.get("headers") ?? "");
    const removeHeaders = data.get("removeHeaders") === "on";
    const parsed = parseHeaderLines(headerText);
    if ("bad" in parsed) {
      const message = `Write each header as "Name: value" on its own line ("${parsed.bad}" is not).`;
      return errors.fail({
        ok: false,
        code: "invalid_request",
        message,
        fieldErrors: { headers: message },
      });
    }
    // Editing, an empty box keeps the stored headers (they are never shown to fill it in).
    const headers = removeHeaders ? {} : gateway && headerText.trim() === "" ? undefined : parsed;
    const input = {
      name: String(data.get("name") ?? "").trim(),
      url: String(data.get("url") ?? "").trim(),
      ...(headers !== undefined ? { headers } : {}),
      agents: data.getAll("agents").map(String),
    };
    startTransition(async () => {
      const result = gateway
        ? await editMcpGatewayAction(gateway.id, { ...input, expectedRevision: gateway.revision })
        : await createMcpGatewayAction(input);
      if (!result.ok) return errors.fail(result);
      errors.reset();
      if (!gateway) form.reset();
      onDone(
        gateway
          ? `Saved ${result.gateway.name}.`
          : `Added ${result.gateway.name}: agents connect at ${result.gateway.endpoint}`,
      );
    });
  }

  const titleId = `${prefix}-title`;
  return (
    <section className={settings.panel} aria-labelledby={titleId} data-testid={`${prefix}-form`}>
      <h2 id={titleId} className={settings.panelTitle}>
        {gateway ? `Edit ${gateway.name}` : "New MCP gateway"}
      </h2>
      <FormError failure={errors.formFailure} placed={errors.placed} />
      {/* noValidate: the server's answer, worded per field, replaces the browser's bubbles. */}
      <form {...errors.formProps} onSubmit={submit} noValidate className={settings.formGrid}>
        <div className={settings.field}>
          <label htmlFor={`${prefix}-name`}>Name (in its endpoint and in policies)</label>
          <input
            id={`${prefix}-name`}
            name="name"
            required
            maxLength={63}
            defaultValue={gateway?.name}
            autoComplete="off"
            {...errors.field("name", `${prefix}-name`)}
          />
          <FieldError controlId={`${prefix}-name`} message={errors.errorOf("name")} />
        </div>
        <div className={`${settings.field} ${settings.wideField}`}>
          <label htmlFor={`${prefix}-url`}>Upstream MCP server URL (streamable HTTP)</label>
          <input
            id={`${prefix}-url`}
            name="url"
            type="url"
            required
            placeholder="https://mcp.example.com/mcp"
            defaultValue={gateway?.url}
            autoComplete="off"
            {...errors.field("url", `${prefix}-url`)}
          />
          <FieldError controlId={`${prefix}-url`} message={errors.errorOf("url")} />
        </div>
        <div className={`${settings.field} ${settings.fullRow}`}>
          <label htmlFor={`${prefix}-headers`}>Headers sent upstream (one per line)</label>
          <textarea
            id={`${prefix}-headers`}
            name="headers"
            className={styles.headers}
            placeholder="Authorization: Bearer the-servers-own-token"
            spellCheck={false}
            autoComplete="off"
            {...errors.field("headers", `${prefix}-headers`, `${prefix}-headers-hint`)}
          />
          <FieldError controlId={`${prefix}-headers`} message={errors.errorOf("headers")} />
          <p id={`${prefix}-headers-hint`} className={styles.hint}>
            {gateway
              ? `Stored: ${gateway.headerNames.length ? gateway.headerNames.join(", ") : "none"}. Their values are never shown again; leave this empty to keep them, or type them all anew.`
              : "Never shown again, nor given to agents; stored encrypted when the server has a COUNTERSIGN_SECRET_KEY."}
          </p>
          {gateway && gateway.headerNames.length > 0 && (
            <div className={settings.check}>
              <input id={`${prefix}-remove-headers`} name="removeHeaders" type="checkbox" />
              <label htmlFor={`${prefix}-remove-headers`}>Remove the stored headers</label>
            </div>
          )}
        </div>
        <fieldset className={`${styles.agentChecks} ${settings.fullRow}`}>
          <legend>Agent keys that may use it</legend>
          {agents.length === 0 ? (
            <p className={styles.hint}>No agent key is in use yet.</p>
          ) : (
            agents.map((agent) => (
              <label key={agent.id}>
                <input
                  type="checkbox"
                  name="agents"
                  value={agent.id}
                  defaultChecked={allowed.has(agent.id)}
                />{" "}
                {agent.name}
              </label>
            ))
          )}
        </fieldset>
        <div className={`${settings.formActions} ${settings.fullRow}`}>
          <button type="submit" className={settings.primary} disabled={pending}>
            {pending ? "Saving…" : gateway ? "Save gateway" : "Add gateway"}
          </button>
          {onCancel && (
            <button type="button" className={settings.secondary} onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
