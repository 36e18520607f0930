"use client";

import { useState, type FormEvent } from "react";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import settings from "@/components/queue-settings/queue-settings.module.css";
import type { PolicyRuleView } from "@/lib/policies/list-policy-rules";
import styles from "./policies.module.css";
import {
  initialRows,
  predicatesOf,
  readRuleForm,
  RuleFields,
  type PredicateRow,
} from "./rule-fields";

type Queue = { id: string; name: string };

/** A new rule for this queue (or, for an admin, for every queue). */
export function NewRule({
  queue,
  isAdmin,
  pending,
  failure,
  onCreate,
}: {
  queue: Queue;
  isAdmin: boolean;
  pending: boolean;
  failure: ActionFailure | null;
  onCreate: (input: object, done: () => void) => void;
}) {
  const [rows, setRows] = useState<PredicateRow[]>([]);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const { agent, toolPattern, costAbove, reason, ...rest } = readRuleForm(form);
    // A new rule leaves an empty condition out rather than sending null.
    const input = {
      ...rest,
      queue: form.get("scope") === "every" ? null : queue.id,
      ...(agent && { agent }),
      ...(toolPattern && { toolPattern }),
      ...(costAbove !== null && { costAbove }),
      ...(reason && { reason }),
      argPredicates: predicatesOf(rows),
    };
    onCreate(input, () => {
      formElement.reset();
      setRows([]);
    });
  }

  return (
    <section className={settings.panel} aria-labelledby="new-rule-title">
      <h2 id="new-rule-title" className={settings.panelTitle}>
        New rule
      </h2>
      <FormError failure={failure} />
      <form onSubmit={submit} className={settings.formGrid} aria-label="New rule">
        {isAdmin ? (
          <div className={settings.field}>
            <label htmlFor="new-rule-scope">Applies in</label>
            <select id="new-rule-scope" name="scope" defaultValue="queue">
              <option value="queue">{queue.name} only</option>
              <option value="every">Every queue</option>
            </select>
          </div>
        ) : (
          <div className={settings.field}>
            <span className={styles.fixedLabel}>Applies in</span>
            <span className={styles.fixedValue}>{queue.name} only</span>
          </div>
        )}
        <RuleFields rows={rows} onRowsChange={setRows} />
        <div className={settings.formActions}>
          <button type="submit" className={settings.primary} disabled={pending}>
            {pending ? "Saving…" : "Add rule"}
          </button>
        </div>
      </form>
    </section>
  );
}

/** A rule edited in place; its scope stays what it was. */
export function EditRule({
  rule,
  pending,
  failure,
  onSave,
  onCancel,
}: {
  rule: PolicyRuleView;
  pending: boolean;
  failure: ActionFailure | null;
  onSave: (input: object) => void;
  onCancel: () => void;
}) {
  const [rows, setRows] = useState(() => initialRows(rule));

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const { agent, ...fields } = readRuleForm(new FormData(event.currentTarget));
    // Null clears a condition. The agent is shown by name: an unchanged one is not re-resolved
    // (names may repeat).
    onSave({
      ...fields,
      ...(agent !== (rule.agent?.name ?? null) && { agent }),
      argPredicates: predicatesOf(rows),
    });
  }

  return (
    <div className={styles.editing}>
      <FormError failure={failure} />
      <form onSubmit={submit} className={settings.formGrid} aria-label={`Edit rule ${rule.name}`}>
        <RuleFields rule={rule} rows={rows} onRowsChange={setRows} />
        <div className={settings.formActions}>
          <button type="submit" className={settings.primary} disabled={pending}>
            {pending ? "Saving…" : "Save"}
          </button>
          <button type="button" className={settings.secondary} onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
