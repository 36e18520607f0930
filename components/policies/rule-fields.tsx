"use client";

import { useId } from "react";
import type { ArgPredicate, PolicyEffect } from "@/db/schema";
import { FieldError } from "@/components/forms/field-error";
import type { useFieldErrors } from "@/components/forms/use-field-errors";
import type { PolicyRuleView } from "@/lib/policies/list-policy-rules";
import styles from "./policies.module.css";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { numberField } from "@/components/queue-settings/format";
import { EFFECTS } from "./effect-badge";

export type PredicateRow = { key: number; path: string; op: ArgPredicate["op"]; value: string };

const OPS: { op: ArgPredicate["op"]; label: string }[] = [
  { op: "equals", label: "equals" },
  { op: "prefix", label: "starts with" },
  { op: "glob", label: "matches glob" },
  { op: "atMost", label: "is at most" },
];

let nextKey = 0;
const newRow = (row: Omit<PredicateRow, "key">): PredicateRow => ({ key: nextKey++, ...row });

/**
 * A stored value as the user typed it. For `equals` the text is read as JSON when it parses, so a
 * string that would parse as something else (`"5"`, `"true"`) is shown quoted to round-trip.
 */
function valueText(predicate: ArgPredicate): string {
  if (typeof predicate.value !== "string") return JSON.stringify(predicate.value);
  if (predicate.op !== "equals") return predicate.value;
  try {
    JSON.parse(predicate.value);
    return JSON.stringify(predicate.value);
  } catch {
    return predicate.value;
  }
}

function parseValue(row: PredicateRow): unknown {
  if (row.op === "atMost") return row.value.trim() === "" ? row.value : Number(row.value);
  if (row.op !== "equals") return row.value;
  try {
    return JSON.parse(row.value);
  } catch {
    return row.value;
  }
}

export function initialRows(rule?: PolicyRuleView): PredicateRow[] {
  return (rule?.argPredicates ?? []).map((p) =>
    newRow({ path: p.path, op: p.op, value: valueText(p) }),
  );
}

export function predicatesOf(rows: PredicateRow[]): ArgPredicate[] {
  return rows.map((row) => ({ path: row.path.trim(), op: row.op, value: parseValue(row) }));
}

/** The fields a rule's form shows on a control, as the server names them (see `fieldsOf`). */
export const RULE_FIELDS = ["name", "effect", "toolPattern", "agent", "costAbove", "reason"];

/** The fields every rule has; the scope (new rules only) and the buttons are the caller's. */
export function RuleFields({
  rule,
  rows,
  onRowsChange,
  errors,
}: {
  rule?: PolicyRuleView;
  rows: PredicateRow[];
  onRowsChange: (rows: PredicateRow[]) => void;
  errors: ReturnType<typeof useFieldErrors>;
}) {
  const id = useId();
  const change = (key: number, patch: Partial<PredicateRow>) =>
    onRowsChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  /** id, name and error wiring of the control for field `name` (a server path). */
  const control = (name: string, controlId: string) => ({
    id: controlId,
    name,
    ...errors.field(name, controlId),
  });
  const fieldError = (name: string, controlId: string) => (
    <FieldError controlId={controlId} message={errors.errorOf(name)} />
  );
  return (
    <>
      <div className={settings.field}>
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          {...control("name", `${id}-name`)}
          required
          maxLength={100}
          defaultValue={rule?.name}
        />
        {fieldError("name", `${id}-name`)}
      </div>
      <div className={settings.field}>
        <label htmlFor={`${id}-effect`}>Effect</label>
        <select {...control("effect", `${id}-effect`)} required defaultValue={rule?.effect ?? ""}>
          <option value="" disabled>
            Choose…
          </option>
          {(Object.keys(EFFECTS) as PolicyEffect[]).map((effect) => (
            <option key={effect} value={effect}>
              {EFFECTS[effect].label}: {EFFECTS[effect].help}
            </option>
          ))}
        </select>
        {fieldError("effect", `${id}-effect`)}
      </div>
      <div className={settings.field}>
        <label htmlFor={`${id}-tool`}>Tool name (glob, e.g. write_*)</label>
        <input
          {...control("toolPattern", `${id}-tool`)}
          maxLength={200}
          defaultValue={rule?.toolPattern ?? ""}
          placeholder="any tool"
        />
        {fieldError("toolPattern", `${id}-tool`)}
      </div>
      <div className={settings.field}>
        <label htmlFor={`${id}-agent`}>Agent (name or key id)</label>
        <input
          {...control("agent", `${id}-agent`)}
          maxLength={200}
          defaultValue={rule?.agent?.name ?? ""}
          placeholder="any agent"
        />
        {fieldError("agent", `${id}-agent`)}
      </div>
      <div className={settings.field}>
        <label htmlFor={`${id}-cost`}>Cost estimate above</label>
        <input
          {...control("costAbove", `${id}-cost`)}
          type="number"
          min={0}
          step="any"
          defaultValue={rule?.costAbove ?? ""}
          placeholder="any cost"
        />
        {fieldError("costAbove", `${id}-cost`)}
      </div>

      <fieldset className={`${settings.fullRow} ${styles.predicates}`}>
        <legend>Argument conditions</legend>
        <p className={settings.help}>
          All must hold. A path points into the call&apos;s arguments (<code>path</code>,{" "}
          <code>options.target</code>, <code>files[0].path</code>). In a list, <code>paths[*]</code>{" "}
          holds when any element matches and <code>paths[all]</code> when every element does (
          <code>files[*].path</code> looks inside each). For <em>equals</em> the value is read as
          JSON when it parses (<code>5</code>, <code>true</code>, <code>&quot;text&quot;</code>),
          else as text; a glob uses <code>*</code> and <code>?</code>.
        </p>
        {rows.map((row, index) => (
          <div key={row.key} className={styles.predicateRow} data-testid="predicate-row">
            <div className={settings.field}>
              <label htmlFor={`${id}-p${row.key}-path`}>Argument path {index + 1}</label>
              <input
                {...control(`argPredicates.${index}.path`, `${id}-p${row.key}-path`)}
                required
                maxLength={200}
                value={row.path}
                onChange={(event) => change(row.key, { path: event.target.value })}
              />
              {fieldError(`argPredicates.${index}.path`, `${id}-p${row.key}-path`)}
            </div>
            <div className={settings.field}>
              <label htmlFor={`${id}-p${row.key}-op`}>Comparison {index + 1}</label>
              <select
                {...control(`argPredicates.${index}.op`, `${id}-p${row.key}-op`)}
                value={row.op}
                onChange={(event) =>
                  change(row.key, { op: event.target.value as ArgPredicate["op"] })
                }
              >
                {OPS.map(({ op, label }) => (
                  <option key={op} value={op}>
                    {label}
                  </option>
                ))}
              </select>
              {fieldError(`argPredicates.${index}.op`, `${id}-p${row.key}-op`)}
            </div>
            <div className={settings.field}>
              <label htmlFor={`${id}-p${row.key}-value`}>Value {index + 1}</label>
              <input
                {...control(`argPredicates.${index}.value`, `${id}-p${row.key}-value`)}
                required={row.op !== "equals"}
                maxLength={2000}
                value={row.value}
                onChange={(event) => change(row.key, { value: event.target.value })}
              />
              {fieldError(`argPredicates.${index}.value`, `${id}-p${row.key}-value`)}
            </div>
            <button
              type="button"
              className={settings.secondary}
              onClick={() => {
                // The conditions after it move up a place: their messages would point at the
                // wrong row, so all are cleared.
                errors.reset();
                onRowsChange(rows.filter((r) => r.key !== row.key));
              }}
              aria-label={`Remove argument condition ${index + 1}`}
            >
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          className={`${settings.secondary} ${styles.addCondition}`}
          disabled={rows.length >= 20}
          onClick={() => onRowsChange([...rows, newRow({ path: "", op: "equals", value: "" })])}
        >
          Add argument condition
        </button>
      </fieldset>

      <div className={`${settings.field} ${settings.fullRow}`}>
        <label htmlFor={`${id}-reason`}>
          Reason (told to the agent when the rule blocks a call)
        </label>
        <input
          {...control("reason", `${id}-reason`)}
          maxLength={1000}
          defaultValue={rule?.reason ?? ""}
        />
        {fieldError("reason", `${id}-reason`)}
      </div>
    </>
  );
}

/** The fields read from a rule's form; empty optional ones are null (the caller may drop them). */
export function readRuleForm(form: FormData) {
  const text = (name: string) => String(form.get(name) ?? "").trim();
  const cost = text("costAbove");
  return {
    name: text("name"),
    effect: text("effect") as PolicyEffect,
    toolPattern: text("toolPattern") || null,
    agent: text("agent") || null,
    costAbove: cost ? numberField(cost) : null,
    reason: text("reason") || null,
  };
}
