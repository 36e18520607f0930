"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import type { ActionFailure } from "@/app/action-result";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { FormError } from "@/components/queue-settings/form-error";
import settings from "@/components/queue-settings/queue-settings.module.css";
import type { PolicyRuleView } from "@/lib/policies/list-policy-rules";
import type { BacktestReport } from "@/lib/policies/backtest-policy";
import { backtestPolicyAction } from "@/app/(reviewer)/policies/actions";
import { BacktestDetails } from "./backtest-view";
import styles from "./policies.module.css";
import {
  initialRows,
  predicatesOf,
  readRuleForm,
  RULE_FIELDS,
  RuleFields,
  type PredicateRow,
} from "./rule-fields";

type Fail = (failure: ActionFailure) => void;

type Preview = { kind: "loading" } | { kind: "done"; report: BacktestReport };

type Queue = { id: string; name: string };

/** The keys a rule form shows on a control: its own fields and each argument condition's. */
function fieldsOf(rows: PredicateRow[], extra: string[] = []): string[] {
  const conditions = rows.flatMap((_, index) =>
    ["path", "op", "value"].map((part) => `argPredicates.${index}.${part}`),
  );
  return [...RULE_FIELDS, ...extra, ...conditions];
}

/** What both rule forms share: the form-level error above the form, the browser's bubbles off. */
function RuleForm({
  errors,
  label,
  onSubmit,
  children,
}: {
  errors: ReturnType<typeof useFieldErrors>;
  label: string;
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  children: ReactNode;
}) {
  return (
    <>
      <FormError failure={errors.formFailure} placed={errors.placed} />
      {/* noValidate: the server's answer, worded per field, replaces the browser's bubbles. */}
      <form
        {...errors.formProps}
        onSubmit={onSubmit}
        noValidate
        className={settings.formGrid}
        aria-label={label}
      >
        {children}
      </form>
    </>
  );
}

/** A new rule for this queue (or, for an admin, for every queue). */
export function NewRule({
  queue,
  isAdmin,
  pending,
  onCreate,
}: {
  queue: Queue;
  isAdmin: boolean;
  pending: boolean;
  onCreate: (input: object, done: () => void, fail: Fail) => void;
}) {
  const [rows, setRows] = useState<PredicateRow[]>([]);
  const errors = useFieldErrors(fieldsOf(rows, ["queue"]));
  const [preview, setPreview] = useState<Preview | null>(null);

  function inputOf(formElement: HTMLFormElement) {
    const form = new FormData(formElement);
    const { agent, toolPattern, costAbove, reason, ...rest } = readRuleForm(form);
    // A new rule leaves an empty condition out rather than sending null.
    return {
      ...rest,
      queue: form.get("scope") === "every" ? null : queue.id,
      ...(agent && { agent }),
      ...(toolPattern && { toolPattern }),
      ...(costAbove !== null && { costAbove }),
      ...(reason && { reason }),
      argPredicates: predicatesOf(rows),
    };
  }

  /** The rule as the form has it, tried on this queue's last 30 days; nothing is saved. */
  async function backtest(formElement: HTMLFormElement) {
    errors.reset();
    setPreview({ kind: "loading" });
    const result = await backtestPolicyAction({ rule: inputOf(formElement), queue: queue.id });
    if (result.ok) return setPreview({ kind: "done", report: result.report });
    // The rule's own fields carry their messages: the rule is what the form sends under `rule`.
    errors.fail({
      ...result,
      fieldErrors:
        result.fieldErrors &&
        Object.fromEntries(
          Object.entries(result.fieldErrors).map(([path, m]) => [path.replace(/^rule\./, ""), m]),
        ),
    });
    setPreview(null);
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const input = inputOf(formElement);
    errors.reset();
    onCreate(
      input,
      () => {
        formElement.reset();
        setRows([]);
        setPreview(null);
      },
      errors.fail,
    );
  }

  return (
    <section className={settings.panel} aria-labelledby="new-rule-title">
      <h2 id="new-rule-title" className={settings.panelTitle}>
        New rule
      </h2>
      <RuleForm errors={errors} onSubmit={submit} label="New rule">
        {isAdmin ? (
          <div className={settings.field}>
            <label htmlFor="new-rule-scope">Applies in</label>
            <select
              id="new-rule-scope"
              name="scope"
              defaultValue="queue"
              {...errors.field("queue", "new-rule-scope")}
            >
              <option value="queue">{queue.name} only</option>
              <option value="every">Every queue</option>
            </select>
            <FieldError controlId="new-rule-scope" message={errors.errorOf("queue")} />
          </div>
        ) : (
          <div className={settings.field}>
            <span className={styles.fixedLabel}>Applies in</span>
            <span className={styles.fixedValue}>{queue.name} only</span>
          </div>
        )}
        <RuleFields rows={rows} onRowsChange={setRows} errors={errors} />
        <div className={settings.formActions}>
          <button type="submit" className={settings.primary} disabled={pending}>
            {pending ? "Saving…" : "Add rule"}
          </button>
          <button
            type="button"
            className={settings.secondary}
            disabled={preview?.kind === "loading"}
            data-testid="backtest-button"
            onClick={(event) => {
              const form = event.currentTarget.form;
              if (form) void backtest(form);
            }}
          >
            Backtest on the last 30 days
          </button>
        </div>
        <div className={styles.backtestActions} aria-live="polite">
          {preview?.kind === "loading" && (
            <p role="status" className={settings.note} data-testid="backtest-loading">
              Trying the rule on the last 30 days of {queue.name}…
            </p>
          )}
          {preview?.kind === "done" && <BacktestDetails report={preview.report} />}
        </div>
      </RuleForm>
    </section>
  );
}

/** A rule edited in place; its scope stays what it was. */
export function EditRule({
  rule,
  pending,
  onSave,
  onCancel,
}: {
  rule: PolicyRuleView;
  pending: boolean;
  onSave: (input: object, fail: Fail) => void;
  onCancel: () => void;
}) {
  const [rows, setRows] = useState(() => initialRows(rule));
  const errors = useFieldErrors(fieldsOf(rows));

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const { agent, ...fields } = readRuleForm(new FormData(event.currentTarget));
    // Null clears a condition. The agent is shown by name: an unchanged one is not re-resolved
    // (names may repeat).
    errors.reset();
    onSave(
      {
        ...fields,
        ...(agent !== (rule.agent?.name ?? null) && { agent }),
        argPredicates: predicatesOf(rows),
      },
      errors.fail,
    );
  }

  return (
    <div className={styles.editing}>
      <RuleForm errors={errors} onSubmit={submit} label={`Edit rule ${rule.name}`}>
        <RuleFields rule={rule} rows={rows} onRowsChange={setRows} errors={errors} />
        <div className={settings.formActions}>
          <button type="submit" className={settings.primary} disabled={pending}>
            {pending ? "Saving…" : "Save"}
          </button>
          <button type="button" className={settings.secondary} onClick={onCancel}>
            Cancel
          </button>
        </div>
      </RuleForm>
    </div>
  );
}
