"use client";

import { useState } from "react";
import styles from "./review-card.module.css";
import type { Batch, DecisionResult, ReviewClaim, Viewer } from "./types";
import { useClock } from "./use-clock";

/**
 * The batch's claim while it lasts: the server shows a claim until it expires, and the card hides
 * it at `expiresAt` by its own clock, so no event is needed when a claim runs out.
 */
export function useLiveClaim(batch: Batch, now: () => number): ReviewClaim | null {
  const claim = batch.status === "pending" ? (batch.claim ?? null) : null;
  const clock = useClock(now, claim !== null);
  return claim && Date.parse(claim.expiresAt) > clock ? claim : null;
}

function minutesLeft(claim: ReviewClaim, now: number): string {
  const left = Date.parse(claim.expiresAt) - now;
  // Rounded, not ceiled: the clock ticks in whole seconds, and a fresh 5-minute claim must not read 6.
  return left < 60_000 ? "under a minute left" : `${Math.round(left / 60_000)} min left`;
}

/** "Dana is reviewing (4 min left)" or "You are reviewing", and the "I'm reviewing this" toggle. */
export function ClaimControl(props: {
  batch: Batch;
  claim: ReviewClaim | null;
  viewer?: Viewer;
  /** whether the card still takes decisions (pending, before its deadline) */
  open: boolean;
  onClaim?: (batchId: string, claim: boolean) => Promise<DecisionResult>;
  now: () => number;
}) {
  const { batch, claim, viewer, onClaim } = props;
  const clock = useClock(props.now, claim !== null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const mine = claim !== null && claim.by.id === viewer?.id;
  const canToggle = props.open && !!onClaim && !!viewer && (claim === null || mine);
  if (!claim && !canToggle) return null;

  const toggle = async () => {
    if (!onClaim) return;
    setBusy(true);
    setError(null);
    try {
      const result = await onClaim(batch.id, !mine);
      if (!result.ok) setError(result.message);
    } catch {
      setError("The claim did not reach the server. Try again.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className={styles.claim} data-testid="review-claim" data-mine={mine || undefined}>
      {claim && (
        <span className={styles.claimStatus} data-testid="claim-status">
          <span className={styles.claimDot} aria-hidden="true" />
          {`${mine ? "You are" : `${claim.by.name} is`} reviewing (${minutesLeft(claim, clock)})`}
          {claim.locked && !mine ? " · only they can decide until then" : ""}
        </span>
      )}
      {canToggle && (
        <button
          type="button"
          className={styles.button}
          aria-pressed={mine}
          disabled={busy}
          onClick={toggle}
          data-testid="claim-button"
        >
          {mine ? "Stop reviewing" : "I'm reviewing this"}
        </button>
      )}
      {error && (
        <span role="alert" className={styles.claimError}>
          {error}
        </span>
      )}
    </div>
  );
}
