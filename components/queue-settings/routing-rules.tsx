"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import {
  createRuleAction,
  deleteRuleAction,
  moveRuleAction,
  updateRuleAction,
} from "@/app/(reviewer)/routing/actions";
import type { ActionFailure, ActionResult } from "@/app/action-result";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import type { RoutingRuleView } from "@/lib/routing/list-rules";
import { FormError } from "./form-error";
import { numberField } from "./format";
import { RuleButtons } from "./rule-buttons";
import styles from "./queue-settings.module.css";
import { ScrollBox } from "@/components/app-shell/scroll-box";

type QueueOption = { id: string; name: string };

/**
 * The rules in the order they are tried: add one, edit one in place, move it up or down,
 * switch it off and on, remove it. Every change goes through a server action and the page
 * reloads its data from the server, so what is shown is what is stored.
 */
export function RoutingRules({
  rules,
  queues,
}: {
  rules: RoutingRuleView[];
  queues: QueueOption[];
}) {
  const router = useRouter();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  /**
   * Runs an action; on success refreshes the page's data, on failure shows why: in the form
   * that sent it (`onFailure`), else over the list.
   */
  function run(
    action: () => Promise<ActionResult<object>>,
    onDone?: () => void,
    onFailure?: (failure: ActionFailure) => void,
  ) {
    startTransition(async () => {
      const result = await action();
      if (!result.ok) return onFailure ? onFailure(result) : setFailure(result);
      setFailure(null);
      onDone?.();
      router.refresh();
    });
  }

  return (
    <>
      <section className={styles.panel} aria-labelledby="new-rule-title">
        <h2 id="new-rule-title" className={styles.panelTitle}>
          New rule
        </h2>
        <FormError failure={editing ? null : failure} />
        <RuleForm
          idPrefix="rule"
          queues={queues}
          pending={pending}
          submitLabel={pending && !editing ? "Saving…" : "Add rule"}
          onSubmit={(form, fail) => {
            const input = ruleInput(new FormData(form), { clearEmpty: false });
            run(
              () => createRuleAction(input),
              () => form.reset(),
              fail,
            );
          }}
        />
      </section>
      <ScrollBox label="Routing rules" className={styles.tableWrap}>
        <table className={styles.table} aria-label="Routing rules, in the order they are tried">
          <thead>
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Name</th>
              <th scope="col">When</th>
              <th scope="col">Send to</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.length === 0 ? (
              <tr>
                <td colSpan={5}>
                  No rules yet: every batch goes to its agent key&apos;s default queue.
                </td>
              </tr>
            ) : (
              rules.map((rule, index) =>
                editing === rule.id ? (
                  <tr key={rule.id} data-testid="routing-rule">
                    <td colSpan={5}>
                      <RuleForm
                        idPrefix={`edit-${rule.id}`}
                        queues={queues}
                        rule={rule}
                        pending={pending}
                        submitLabel={pending ? "Saving…" : "Save"}
                        onCancel={() => {
                          setEditing(null);
                          setFailure(null);
                        }}
                        onSubmit={(form, fail) => {
                          const input = ruleInput(new FormData(form), { clearEmpty: true });
                          // The agent is shown by name; an unchanged name is not re-resolved
                          // (names may repeat).
                          if (input.agent === rule.agent?.name) delete input.agent;
                          run(
                            () => updateRuleAction(rule.id, input),
                            () => setEditing(null),
                            fail,
                          );
                        }}
                      />
                    </td>
                  </tr>
                ) : (
                  <tr
                    key={rule.id}
                    data-testid="routing-rule"
                    className={rule.enabled ? undefined : styles.muted}
                  >
                    <td>{index + 1}</td>
                    <td>
                      {rule.name}
                      {!rule.enabled && " (off)"}
                    </td>
                    <td>{describe(rule)}</td>
                    <td>{rule.queue.name}</td>
                    <td className={styles.actions}>
                      <RuleButtons
                        name={rule.name}
                        enabled={rule.enabled}
                        index={index}
                        count={rules.length}
                        earlier="tried earlier"
                        later="tried later"
                        disabled={pending}
                        onMove={(to) => run(() => moveRuleAction(rule.id, to))}
                        onToggle={() =>
                          run(() => updateRuleAction(rule.id, { enabled: !rule.enabled }))
                        }
                        onEdit={() => {
                          setFailure(null);
                          setEditing(rule.id);
                        }}
                        onRemove={() => run(() => deleteRuleAction(rule.id))}
                      />
                    </td>
                  </tr>
                ),
              )
            )}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}

const FIELDS = ["name", "queue", "toolPattern", "agent", "minCost"] as const;

/**
 * A rule's form, empty for a new one or filled with the rule being edited; a refusal is shown
 * on the fields it is about, and anything else (a name taken) above them.
 */
function RuleForm({
  idPrefix,
  queues,
  rule,
  pending,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  idPrefix: string;
  queues: QueueOption[];
  rule?: RoutingRuleView;
  pending: boolean;
  submitLabel: string;
  onSubmit: (form: HTMLFormElement, fail: (failure: ActionFailure) => void) => void;
  onCancel?: () => void;
}) {
  const errors = useFieldErrors(FIELDS);
  const control = (name: (typeof FIELDS)[number], suffix: string) => ({
    id: `${idPrefix}-${suffix}`,
    name,
    ...errors.field(name, `${idPrefix}-${suffix}`),
  });
  const fieldError = (name: (typeof FIELDS)[number], suffix: string) => (
    <FieldError controlId={`${idPrefix}-${suffix}`} message={errors.errorOf(name)} />
  );
  return (
    <>
      <FormError failure={errors.formFailure} placed={errors.placed} />
      {/* noValidate: the server's answer, worded per field, replaces the browser's bubbles. */}
      <form
        {...errors.formProps}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          errors.reset();
          onSubmit(event.currentTarget, errors.fail);
        }}
        className={styles.formGrid}
        aria-label={rule ? `Edit rule ${rule.name}` : undefined}
      >
        <div className={styles.field}>
          <label htmlFor={`${idPrefix}-name`}>Name</label>
          <input {...control("name", "name")} required maxLength={100} defaultValue={rule?.name} />
          {fieldError("name", "name")}
        </div>
        <div className={styles.field}>
          <label htmlFor={`${idPrefix}-queue`}>Send to queue</label>
          <select {...control("queue", "queue")} required defaultValue={rule?.queue.id}>
            {queues.map((q) => (
              <option key={q.id} value={q.id}>
                {q.name}
              </option>
            ))}
          </select>
          {fieldError("queue", "queue")}
        </div>
        <div className={styles.field}>
          <label htmlFor={`${idPrefix}-tool`}>Tool name (glob, e.g. refund_*)</label>
          <input
            {...control("toolPattern", "tool")}
            maxLength={200}
            defaultValue={rule?.toolPattern ?? ""}
          />
          {fieldError("toolPattern", "tool")}
        </div>
        <div className={styles.field}>
          <label htmlFor={`${idPrefix}-agent`}>Agent (name or key id)</label>
          <input
            {...control("agent", "agent")}
            maxLength={200}
            defaultValue={rule?.agent?.name ?? ""}
          />
          {fieldError("agent", "agent")}
        </div>
        <div className={styles.field}>
          <label htmlFor={`${idPrefix}-cost`}>Total cost at least</label>
          <input
            {...control("minCost", "cost")}
            type="number"
            min={0}
            step="any"
            defaultValue={rule?.minCost ?? ""}
          />
          {fieldError("minCost", "cost")}
        </div>
        <div className={styles.formActions}>
          <button type="submit" className={styles.primary} disabled={pending}>
            {submitLabel}
          </button>
          {onCancel && (
            <button type="button" className={styles.secondary} onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </>
  );
}

/**
 * A rule's input from its form. For a new rule an empty optional field is left out; for an
 * edit it is sent as null, which clears that condition.
 */
function ruleInput(
  form: FormData,
  { clearEmpty }: { clearEmpty: boolean },
): {
  name: string;
  queue: string;
  agent?: string | null;
  toolPattern?: string | null;
  minCost?: number | string | null;
} {
  const text = (name: string) => String(form.get(name) ?? "").trim();
  const optional = (value: string) => (value ? value : clearEmpty ? null : undefined);
  const cost = text("minCost");
  return {
    name: text("name"),
    queue: text("queue"),
    agent: optional(text("agent")),
    toolPattern: optional(text("toolPattern")),
    minCost: cost ? numberField(cost) : clearEmpty ? null : undefined,
  };
}

function describe(rule: RoutingRuleView): string {
  const parts = [
    rule.agent && `agent is ${rule.agent.name}`,
    rule.toolPattern && `a tool matches ${rule.toolPattern}`,
    rule.minCost !== null && `total cost ≥ ${rule.minCost}`,
  ].filter(Boolean);
  return parts.length ? parts.join(" and ") : "always";
}
