"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { createRuleAction, deleteRuleAction } from "@/app/(reviewer)/routing/actions";
import type { ActionFailure } from "@/app/action-result";
import type { RoutingRuleView } from "@/lib/routing/list-rules";
import { FormError } from "./form-error";
import styles from "./queue-settings.module.css";

/** The rules in the order they are tried, a form to add one, and a remove button per rule. */
export function RoutingRules({
  rules,
  queues,
}: {
  rules: RoutingRuleView[];
  queues: { id: string; name: string }[];
}) {
  const router = useRouter();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [pending, startTransition] = useTransition();

  function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const text = (name: string) => String(form.get(name) ?? "").trim() || undefined;
    const minCost = text("minCost");
    startTransition(async () => {
      const result = await createRuleAction({
        name: text("name") ?? "",
        queue: text("queue") ?? "",
        agent: text("agent"),
        toolPattern: text("toolPattern"),
        minCost: minCost === undefined ? undefined : Number(minCost),
      });
      if (!result.ok) return setFailure(result);
      setFailure(null);
      formElement.reset();
      router.refresh();
    });
  }

  function remove(rule: RoutingRuleView) {
    startTransition(async () => {
      const result = await deleteRuleAction(rule.id);
      if (!result.ok) return setFailure(result);
      setFailure(null);
      router.refresh();
    });
  }

  return (
    <>
      <section className={styles.panel} aria-labelledby="new-rule-title">
        <h2 id="new-rule-title" className={styles.panelTitle}>
          New rule
        </h2>
        <FormError failure={failure} />
        <form onSubmit={add} className={styles.formGrid}>
          <div className={styles.field}>
            <label htmlFor="rule-name">Name</label>
            <input id="rule-name" name="name" required maxLength={100} />
          </div>
          <div className={styles.field}>
            <label htmlFor="rule-queue">Send to queue</label>
            <select id="rule-queue" name="queue" required>
              {queues.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.name}
                </option>
              ))}
            </select>
          </div>
          <div className={styles.field}>
            <label htmlFor="rule-tool">Tool name (glob, e.g. refund_*)</label>
            <input id="rule-tool" name="toolPattern" maxLength={200} />
          </div>
          <div className={styles.field}>
            <label htmlFor="rule-agent">Agent (name or key id)</label>
            <input id="rule-agent" name="agent" maxLength={200} />
          </div>
          <div className={styles.field}>
            <label htmlFor="rule-cost">Total cost at least</label>
            <input id="rule-cost" name="minCost" type="number" min={0} step="any" />
          </div>
          <div className={styles.formActions}>
            <button type="submit" className={styles.primary} disabled={pending}>
              {pending ? "Saving…" : "Add rule"}
            </button>
          </div>
        </form>
      </section>
      <div className={styles.tableWrap}>
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
              rules.map((rule, index) => (
                <tr key={rule.id} data-testid="routing-rule">
                  <td>{index + 1}</td>
                  <td>
                    {rule.name}
                    {!rule.enabled && " (disabled)"}
                  </td>
                  <td>{describe(rule)}</td>
                  <td>{rule.queue.name}</td>
                  <td>
                    <button
                      type="button"
                      className={styles.danger}
                      disabled={pending}
                      onClick={() => remove(rule)}
                      aria-label={`Remove rule ${rule.name}`}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

function describe(rule: RoutingRuleView): string {
  const parts = [
    rule.agent && `agent is ${rule.agent.name}`,
    rule.toolPattern && `a tool matches ${rule.toolPattern}`,
    rule.minCost !== null && `total cost ≥ ${rule.minCost}`,
  ].filter(Boolean);
  return parts.length ? parts.join(" and ") : "always";
}
