"use client";

import { useRouter } from "next/navigation";
import { useId, useState, useTransition, type FormEvent } from "react";
import { requestRollbackAction } from "@/app/(reviewer)/actions";
import { useViewerTimeFormat } from "@/components/time/time-zone-provider";
import { formatDateTime } from "@/lib/time/format";
import styles from "./rollback-control.module.css";

/**
 * "Request rollback": a reason (optional) and a confirm step, then the server action. Once asked,
 * the button stays disabled and says when; an error stays inline until the next try.
 */
export function RollbackControl({
  runId,
  requestedAt,
  unavailable,
}: {
  runId: string;
  /** when a rollback was last requested, if ever */
  requestedAt: string | null;
  /** why no worker could act on a rollback (lib/runs/rollback-offer.ts); null when one can */
  unavailable: string | null;
}) {
  const router = useRouter();
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [justRequested, setJustRequested] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  const reasonId = useId();
  const hintId = useId();
  const requested = justRequested ?? requestedAt;
  const timeFormat = useViewerTimeFormat();

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(null);
    startTransition(async () => {
      const result = await requestRollbackAction(runId, reason.trim());
      if (result.ok) {
        setJustRequested(result.rollbackRequestedAt ?? new Date().toISOString());
        setConfirming(false);
        // the timeline gains its rollback.requested event
        router.refresh();
      } else {
        setError(result.message);
      }
    });
  };

  return (
    <section className={styles.panel} aria-labelledby="rollback-heading">
      <h2 id="rollback-heading" className={styles.heading}>
        Rollback
      </h2>
      {requested ? (
        <>
          <p className={styles.done} role="status" data-testid="rollback-status">
            Rollback requested{" "}
            <time dateTime={requested} className={styles.when}>
              {formatDateTime(requested, timeFormat)}
            </time>
            . The next worker to claim this run gets the actions it reported, to revert them.
          </p>
          <button type="button" className={styles.button} disabled>
            Rollback requested
          </button>
        </>
      ) : unavailable ? (
        // No button: a request nothing would ever perform is not offered.
        <p className={styles.text} data-testid="rollback-unavailable">
          {unavailable}
        </p>
      ) : confirming ? (
        <form className={styles.form} onSubmit={submit}>
          <p className={styles.text} id={hintId}>
            The agent&apos;s next claim of this run lists the actions it reported, newest first, so
            it can undo them.
          </p>
          <label htmlFor={reasonId} className={styles.label}>
            Reason <span className={styles.optional}>(optional)</span>
          </label>
          <textarea
            id={reasonId}
            className={styles.textarea}
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            maxLength={4000}
            rows={3}
            aria-describedby={hintId}
            disabled={pending}
          />
          <div className={styles.actions}>
            <button type="submit" className={styles.danger} disabled={pending}>
              {pending ? "Requesting…" : "Confirm rollback"}
            </button>
            <button
              type="button"
              className={styles.button}
              onClick={() => {
                setConfirming(false);
                setError(null);
              }}
              disabled={pending}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <p className={styles.text}>
            Ask the agent to undo the actions this run reported (refunds, merges, deletions…).
          </p>
          <button type="button" className={styles.button} onClick={() => setConfirming(true)}>
            Request rollback…
          </button>
        </>
      )}
      {error && (
        <p className={styles.error} role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
