"use client";

import Link from "next/link";
import { useState, useTransition } from "react";
import {
  createAgentKeyAction,
  revokeAgentKeyAction,
  rotateAgentKeyAction,
} from "@/app/(reviewer)/agents/actions";
import { FormError } from "@/components/queue-settings/form-error";
import { RowConfirm, useConfirmRows } from "@/components/queue-settings/confirm-action";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { useActionOutcome } from "@/components/queue-settings/use-action-outcome";
import { Badge } from "@/components/run-timeline/badges";
import type { AgentKeyView } from "@/lib/agents/agent-keys";
import styles from "./credentials.module.css";
import { SecretOnce, When } from "./secret-once";
import { ScrollBox } from "@/components/app-shell/scroll-box";

type QueueOption = { id: string; name: string };

const GRACE_CHOICES = [
  { secs: 0, label: "stops at once" },
  { secs: 3600, label: "works 1 more hour" },
  { secs: 86_400, label: "works 24 more hours" },
  { secs: 7 * 86_400, label: "works 7 more days" },
];

/**
 * Agent keys for admins (all) and leads (those whose default queue they lead): create one (its
 * secret shown once), rotate it with a grace period for the old secret, revoke it at once.
 */
export function AgentKeys({ agents, queues }: { agents: AgentKeyView[]; queues: QueueOption[] }) {
  const { failure, status, done } = useActionOutcome();
  const [secret, setSecret] = useState<{ title: string; value: string; note: string } | null>(null);
  const [rotating, setRotating] = useState<AgentKeyView | null>(null);
  const [grace, setGrace] = useState(86_400);
  const transition = useTransition();
  const [pending, startTransition] = transition;
  const rows = useConfirmRows(transition);

  function create(form: HTMLFormElement) {
    const data = new FormData(form);
    const defaultQueue = String(data.get("defaultQueue") ?? "");
    const input = {
      name: String(data.get("name") ?? ""),
      defaultQueue,
      queues: data
        .getAll("queues")
        .map(String)
        .filter((id) => id !== defaultQueue),
      ...(data.get("ownerEmail") ? { ownerEmail: String(data.get("ownerEmail")) } : {}),
    };
    startTransition(async () => {
      const result = await createAgentKeyAction(input);
      if (result.ok) {
        form.reset();
        setSecret({
          title: `The key of ${result.agent.name}`,
          value: result.key,
          note:
            "Copy it now: it is shown only this once (only its hash is kept). Its webhook signing secret: " +
            result.webhookSecret,
        });
      }
      done(result, result.ok ? `Created the key of ${result.agent.name}.` : "");
    });
  }

  function rotate(agent: AgentKeyView) {
    startTransition(async () => {
      const result = await rotateAgentKeyAction(agent.id, { graceSecs: grace });
      if (result.ok) {
        setRotating(null);
        setSecret({
          title: `The new key of ${agent.name}`,
          value: result.key,
          note: `Copy it now: it is shown only this once. The old key ${
            result.agent.previousKeyExpiresAt
              ? `works until ${result.agent.previousKeyExpiresAt}`
              : "no longer works"
          }.`,
        });
      }
      done(result, result.ok ? `Rotated the key of ${agent.name}.` : "");
    });
  }

  async function revoke(agent: AgentKeyView) {
    const result = await revokeAgentKeyAction(agent.id);
    done(result, `Revoked the key of ${agent.name}: it is refused from now on.`);
  }

  return (
    <>
      {secret && (
        <SecretOnce
          title={secret.title}
          secret={secret.value}
          note={secret.note}
          onDone={() => setSecret(null)}
        />
      )}
      <FormError failure={failure} />
      <p className={settings.status} role="status" data-testid="agents-status">
        {status}
      </p>

      {rotating && (
        <div className={styles.rotate} data-testid="rotate-panel">
          <label htmlFor="grace">
            New secret for <strong>{rotating.name}</strong>; the old one
          </label>
          <select
            id="grace"
            className={settings.inlineSelect}
            value={grace}
            onChange={(event) => setGrace(Number(event.target.value))}
          >
            {GRACE_CHOICES.map((choice) => (
              <option key={choice.secs} value={choice.secs}>
                {choice.label}
              </option>
            ))}
          </select>
          <button
            type="button"
            className={settings.primary}
            disabled={pending}
            onClick={() => rotate(rotating)}
          >
            Rotate key
          </button>
          <button type="button" className={settings.secondary} onClick={() => setRotating(null)}>
            Cancel
          </button>
        </div>
      )}

      {agents.length === 0 ? (
        <div className={settings.empty}>
          <p className={settings.emptyTitle}>No agent keys yet</p>
          <p className={settings.emptyText}>Create one below and give its secret to the agent.</p>
        </div>
      ) : (
        <ScrollBox label="Agent keys" className={settings.tableWrap}>
          <table className={`${settings.table} stack-table`}>
            <caption className="visually-hidden">Agent keys</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Queues</th>
                <th scope="col">Owner</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {agents.map((agent) => (
                <tr
                  key={agent.id}
                  data-testid="agent-key-row"
                  data-agent-id={agent.id}
                  className={agent.revokedAt ? settings.muted : undefined}
                >
                  <td data-cell="name">
                    <strong>{agent.name}</strong>{" "}
                    <code className={styles.prefix}>{agent.keyPrefix}…</code>
                  </td>
                  <td data-label="Queues">
                    {agent.defaultQueue.name}
                    {agent.queues.length > 1 &&
                      ` (+ ${agent.queues
                        .filter((q) => q.id !== agent.defaultQueue.id)
                        .map((q) => q.name)
                        .join(", ")})`}
                  </td>
                  <td data-label="Owner">{agent.owner?.name ?? "—"}</td>
                  <td data-label="Last used">
                    <When at={agent.lastUsedAt} />
                  </td>
                  <td className={styles.nowrap} data-label="Status">
                    {agent.revokedAt ? (
                      <Badge tone="neutral">Revoked</Badge>
                    ) : agent.previousKeyExpiresAt ? (
                      <span title={`The old key works until ${agent.previousKeyExpiresAt}`}>
                        <Badge tone="warn">Rotating</Badge>
                      </span>
                    ) : (
                      <Badge tone="ok">Active</Badge>
                    )}
                  </td>
                  <td className={settings.actions} data-cell="actions">
                    {!agent.revokedAt && (
                      <span className={settings.rowButtons}>
                        <button
                          type="button"
                          className={settings.secondary}
                          disabled={pending}
                          onClick={() => setRotating(agent)}
                          aria-label={`Rotate the key of ${agent.name}`}
                        >
                          Rotate…
                        </button>
                        <RowConfirm
                          row={agent.id}
                          verb="Revoke"
                          ariaLabel={`Revoke the key of ${agent.name}`}
                          rows={rows}
                          onConfirm={() => revoke(agent)}
                        />
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <p className={styles.details}>
        An agent&apos;s mode (whether its calls meet the policy rules) is set on the{" "}
        <Link href="/policies">Policies</Link> page. Remote MCP servers an agent may use through
        Countersign, its tool calls gated, are on the <Link href="/mcp-gateways">MCP gateways</Link>{" "}
        page.
      </p>

      <section className={settings.panel} aria-labelledby="new-agent-title">
        <h2 id="new-agent-title" className={settings.panelTitle}>
          New agent key
        </h2>
        {queues.length === 0 ? (
          <p className={settings.muted}>You manage no open queue to give a key.</p>
        ) : (
          <form
            className={settings.formGrid}
            onSubmit={(event) => {
              event.preventDefault();
              create(event.currentTarget);
            }}
          >
            <div className={settings.field}>
              <label htmlFor="agent-name">Name (shown on cards)</label>
              <input id="agent-name" name="name" required maxLength={100} />
            </div>
            <div className={settings.field}>
              <label htmlFor="agent-default-queue">Default queue</label>
              <select id="agent-default-queue" name="defaultQueue" required>
                {queues.map((q) => (
                  <option key={q.id} value={q.id}>
                    {q.name}
                  </option>
                ))}
              </select>
            </div>
            <div className={settings.field}>
              <label htmlFor="agent-owner">Owner&apos;s email (optional)</label>
              <input id="agent-owner" name="ownerEmail" type="email" />
            </div>
            {queues.length > 1 && (
              <fieldset className={`${styles.queueChecks} ${settings.fullRow}`}>
                <legend>Other queues it may target</legend>
                {queues.map((q) => (
                  <label key={q.id}>
                    <input type="checkbox" name="queues" value={q.id} /> {q.name}
                  </label>
                ))}
              </fieldset>
            )}
            <div className={settings.formActions}>
              <button type="submit" className={settings.primary} disabled={pending}>
                Create key
              </button>
            </div>
          </form>
        )}
      </section>
    </>
  );
}
