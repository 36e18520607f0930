"use client";

import { useId } from "react";
import styles from "./review-card.module.css";
import type { RememberScope } from "./types";

const OPTIONS: [RememberScope, string][] = [
  ["once", "just this once"],
  ["run", "for this run"],
  ["conversation", "for this conversation"],
];

/** How long an approval is remembered: later identical calls are then approved automatically. */
export function ScopeSelect(props: {
  label: string;
  value: RememberScope;
  onChange: (scope: RememberScope) => void;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <span className={styles.scope}>
      <label htmlFor={id} className={styles.scopeLabel}>
        Remember<span className={styles.visuallyHidden}> approval of {props.label}</span>
      </label>
      <select
        id={id}
        className={styles.select}
        data-testid="scope-select"
        value={props.value}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.target.value as RememberScope)}
      >
        {OPTIONS.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </span>
  );
}
