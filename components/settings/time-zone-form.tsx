"use client";

import { useRouter } from "next/navigation";
import { useId, useState, useTransition, type FormEvent } from "react";
import { saveMySettingsAction } from "@/app/(reviewer)/settings/actions";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { Time } from "@/components/time/time";
import { useViewerTimeFormat } from "@/components/time/time-zone-provider";

/** The empty choice: no zone of one's own, the browser's is used. */
const FOLLOW_BROWSER = "";

/**
 * The zone every time is shown in: the browser's (the default) or one chosen here, which also
 * applies to emails and on every device. Saving re-renders the page, so the preview and every
 * time on it change at once.
 */
export function TimeZoneForm({
  chosen,
  browserZone,
  zones,
  renderedAt,
}: {
  /** the person's own zone, null when they follow the browser */
  chosen: string | null;
  /** what the browser last reported, if anything */
  browserZone: string | null;
  zones: string[];
  renderedAt: number;
}) {
  const router = useRouter();
  const id = useId();
  const { timeZone: shownIn } = useViewerTimeFormat();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [status, setStatus] = useState("");
  const [pending, startTransition] = useTransition();
  // A saved zone this list does not hold (an alias) stays selectable rather than vanishing.
  const choices = chosen && !zones.includes(chosen) ? [chosen, ...zones] : zones;

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget).get("timeZone") ?? FOLLOW_BROWSER);
    setStatus("");
    startTransition(async () => {
      const result = await saveMySettingsAction({
        timeZone: value === FOLLOW_BROWSER ? null : value,
      });
      if (!result.ok) return setFailure(result);
      setFailure(null);
      setStatus(
        result.settings.timeZone
          ? `Saved. Times are shown in ${result.settings.timeZone}.`
          : "Saved. Times follow your browser's time zone.",
      );
      router.refresh();
    });
  }

  return (
    <section className={styles.panel} aria-labelledby={`${id}-title`} data-testid="time-zone">
      <h2 id={`${id}-title`} className={styles.panelTitle}>
        Time zone
      </h2>
      <form onSubmit={submit} noValidate aria-describedby={`${id}-status`}>
        <div className={styles.field}>
          <label htmlFor={`${id}-zone`}>Show times in</label>
          <select
            id={`${id}-zone`}
            name="timeZone"
            defaultValue={chosen ?? FOLLOW_BROWSER}
            aria-describedby={`${id}-help`}
          >
            <option value={FOLLOW_BROWSER}>
              My browser&apos;s time zone{browserZone ? ` (${browserZone})` : ""}
            </option>
            {choices.map((zone) => (
              <option key={zone} value={zone}>
                {zone.replaceAll("_", " ")}
              </option>
            ))}
          </select>
          <span id={`${id}-help`} className={styles.help}>
            Used on every page and in your notification emails (which use UTC while you follow the
            browser).
          </span>
        </div>
        <p className={styles.help} data-testid="time-zone-preview">
          Now it is{" "}
          <Time iso={new Date(renderedAt).toISOString()} now={renderedAt} variant="exact" /> (
          {shownIn}).
        </p>
        <div className={styles.formActions}>
          <button type="submit" className={styles.primary} disabled={pending}>
            {pending ? "Saving…" : "Save"}
          </button>
          <span id={`${id}-status`} role="status" className={styles.status}>
            {status}
          </span>
        </div>
        <FormError failure={failure} />
      </form>
    </section>
  );
}
