"use client";

import { useId, useState, useTransition } from "react";
import { saveMySettingsAction } from "@/app/(reviewer)/settings/actions";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import styles from "@/components/queue-settings/queue-settings.module.css";

/**
 * Single-key shortcuts on or off (WCAG 2.1.4: a stray letter from speech input or a slip of the
 * hand must not approve a production action). Saved at once when the box changes; the queue reads
 * it when it loads, so the next visit (or a reload) follows it.
 */
export function ShortcutsForm({ enabled }: { enabled: boolean }) {
  const id = useId();
  const [checked, setChecked] = useState(enabled);
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [status, setStatus] = useState("");
  const [pending, startTransition] = useTransition();

  function change(next: boolean) {
    setChecked(next);
    setStatus("");
    startTransition(async () => {
      const result = await saveMySettingsAction({ shortcutsEnabled: next });
      if (!result.ok) {
        setChecked(!next);
        return setFailure(result);
      }
      setFailure(null);
      setChecked(result.settings.shortcutsEnabled);
      setStatus(
        result.settings.shortcutsEnabled
          ? "Saved. Single-key shortcuts are on."
          : "Saved. Single-key shortcuts are off; use the buttons.",
      );
    });
  }

  return (
    <section className={styles.panel} aria-labelledby={`${id}-title`} data-testid="shortcuts">
      <h2 id={`${id}-title`} className={styles.panelTitle}>
        Keyboard shortcuts
      </h2>
      <div className={styles.check} style={{ paddingTop: 0 }}>
        <input
          id={`${id}-enabled`}
          type="checkbox"
          name="shortcutsEnabled"
          checked={checked}
          disabled={pending}
          aria-describedby={`${id}-help`}
          data-testid="shortcuts-enabled"
          onChange={(event) => change(event.target.checked)}
        />
        <label htmlFor={`${id}-enabled`}>Single-key shortcuts in the queue</label>
        <span id={`${id}-help`} className={styles.help}>
          <kbd>a</kbd> approves (after a 5-second undo window), <kbd>r</kbd> rejects, <kbd>e</kbd>{" "}
          edits, <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>z</kbd> undoes, <kbd>?</kbd> lists them. Turn
          them off if you use speech input or keys get pressed by accident; every button still
          works.
        </span>
      </div>
      <p role="status" className={styles.status} data-testid="shortcuts-status">
        {status}
      </p>
      <FormError failure={failure} />
    </section>
  );
}
