"use client";

import { useEffect, useState } from "react";
import { ReasonForm } from "./reason-form";
import styles from "./review-card.module.css";
import { raceNoticeText } from "./notices";
import { restToDecide } from "./race-text";
import type { Batch, BatchDecisionRequest, Call } from "./types";
import { KeptText } from "./unsent-draft";
import { useClock } from "./use-clock";
import type { BatchBusy, Notice, Settled } from "./use-decisions";

/** Approve or reject every call of the batch in one all-or-nothing request. */
export function BatchControls(props: {
  batch: Batch;
  busy: BatchBusy;
  decideBatch: (request: BatchDecisionRequest) => Promise<Settled>;
  onSettled: (settled: Settled) => void;
  /** the reject-all reason as typed (null: no form open), kept by the card if the controls go */
  onDraft?: (draft: BatchDecisionRequest | null) => void;
}) {
  const { batch, busy, onDraft } = props;
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const pending = batch.calls.filter((call) => call.status === "pending");
  const draftRevisions = JSON.stringify(pending.map((call) => [call.id, call.revision]));
  useEffect(() => {
    onDraft?.(
      rejecting && reason.trim()
        ? {
            batchId: batch.id,
            outcome: "reject",
            expectedRevisions: Object.fromEntries(JSON.parse(draftRevisions) as [string, number][]),
            reason,
          }
        : null,
    );
  }, [onDraft, rejecting, reason, batch.id, draftRevisions]);

  async function send(outcome: BatchDecisionRequest["outcome"], text?: string) {
    const settled = await props.decideBatch({
      batchId: batch.id,
      outcome,
      // the revisions on screen: the server refuses the whole batch if any call moved since
      expectedRevisions: Object.fromEntries(pending.map((call) => [call.id, call.revision])),
      ...(text === undefined ? {} : { reason: text }),
    });
    if (settled !== "error") setRejecting(false);
    if (settled === "ok") setReason("");
    props.onSettled(settled);
  }

  const count = pending.length;
  // A plan sent with its steps as calls is approved or rejected as a whole here; each step's own
  // row names the step, never the plan.
  const plan = batch.kind === "plan";
  const steps = `${count} step${count === 1 ? "" : "s"}`;
  if (rejecting) {
    return (
      <div className={styles.batchControls}>
        <ReasonForm
          label={plan ? "Reason for rejecting the plan" : `Reason for rejecting all ${count} calls`}
          value={reason}
          onChange={setReason}
          onSubmit={(text) => void send("reject", text)}
          onCancel={() => setRejecting(false)}
          busy={busy === "reject"}
          submitLabel={plan ? "Reject plan" : `Reject all ${count}`}
          busyLabel="Rejecting all…"
          submitAriaLabel={plan ? `Reject the plan (all ${steps})` : `Reject all ${count} calls`}
          testIds={{ reason: "reject-all-reason", confirm: "confirm-reject-all" }}
        />
      </div>
    );
  }
  return (
    <div
      className={styles.batchControls}
      role="group"
      aria-label={plan ? "Decide the whole plan" : "Decide every call"}
    >
      <button
        type="button"
        className={`${styles.button} ${styles.buttonApprove}`}
        data-testid="approve-all"
        disabled={busy !== null}
        onClick={() => void send("approve")}
      >
        {busy === "approve"
          ? "Approving all…"
          : plan
            ? `Approve plan (all ${steps})`
            : `Approve all ${count}`}
      </button>
      <button
        type="button"
        className={`${styles.button} ${styles.buttonDanger}`}
        data-testid="reject-all"
        disabled={busy !== null}
        onClick={() => setRejecting(true)}
      >
        {plan ? `Reject plan (all ${steps})` : `Reject all ${count}`}
      </button>
    </div>
  );
}

/**
 * A batch-wide conflict changes nothing (all or nothing): one sentence on what was settled first,
 * by whom, and what became of the reviewer's click, with their reason kept. When every settled
 * call was settled by the reviewer themselves (a held keyboard approval, another tab), it offers
 * to decide the calls still open, with the same reason (issue 26, item 2).
 */
export function BatchNotice(props: {
  notice: Notice;
  batch: Batch;
  busy: BatchBusy;
  /** the viewer may still decide calls of this card */
  canDecide: boolean;
  decideRest: (
    outcome: BatchDecisionRequest["outcome"],
    calls: Call[],
    reason?: string,
  ) => Promise<Settled>;
  onDismiss: () => void;
  onSettled: (settled: Settled) => void;
  now: () => number;
  viewerId?: string;
}) {
  const { notice, batch } = props;
  const nowMs = useClock(props.now, true);
  if (notice.kind === "error") {
    return (
      <p role="alert" className={styles.errorText} data-testid="decision-error">
        {notice.message}
      </p>
    );
  }
  const request = notice.request && "batchId" in notice.request ? notice.request : undefined;
  const rest = props.canDecide ? restToDecide(batch, props.viewerId) : [];
  const reason = request?.reason ?? "";
  const outcome = request?.outcome;
  const offer =
    outcome && rest.length > 0 && (outcome === "approve" || reason.trim() !== "") ? outcome : null;
  const restLabel = rest.length === 1 ? "the other call" : `the other ${rest.length}`;
  return (
    <div
      className={`${styles.notice} ${styles.toneWarning}`}
      data-testid="conflict-notice"
      data-code={notice.code}
      data-scope="batch"
      tabIndex={-1}
    >
      <p className={styles.noticeHeadline} data-testid="race-sentence" suppressHydrationWarning>
        {raceNoticeText(notice, batch, null, nowMs, props.viewerId)}
      </p>
      <KeptText
        label="Your unsent reason"
        text={outcome === "reject" ? reason : ""}
        onDismiss={props.onDismiss}
      >
        {offer && (
          <button
            type="button"
            className={`${styles.button} ${offer === "approve" ? styles.buttonApprove : styles.buttonDanger}`}
            data-testid="decide-rest"
            disabled={props.busy !== null}
            onClick={() =>
              void props
                .decideRest(offer, rest, offer === "reject" ? reason : undefined)
                .then(props.onSettled)
            }
          >
            {props.busy !== null
              ? offer === "approve"
                ? "Approving…"
                : "Rejecting…"
              : `${offer === "approve" ? "Approve" : "Reject"} ${restLabel}${offer === "reject" ? " with this reason" : ""}`}
          </button>
        )}
      </KeptText>
    </div>
  );
}
