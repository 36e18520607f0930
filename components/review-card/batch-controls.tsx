"use client";

import { useState } from "react";
import { ReasonForm } from "./reason-form";
import styles from "./review-card.module.css";
import type { Batch, BatchDecisionRequest } from "./types";
import type { BatchBusy, Notice, Settled } from "./use-decisions";

/** Approve or reject every call of the batch in one all-or-nothing request. */
export function BatchControls(props: {
  batch: Batch;
  busy: BatchBusy;
  decideBatch: (request: BatchDecisionRequest) => Promise<Settled>;
  onSettled: (settled: Settled) => void;
}) {
  const { batch, busy } = props;
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const pending = batch.calls.filter((call) => call.status === "pending");

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

/** A batch-wide conflict changes nothing (all or nothing); each row then shows its own state. */
export function BatchNotice({ notice }: { notice: Notice }) {
  if (notice.kind === "error") {
    return (
      <p role="alert" className={styles.errorText} data-testid="decision-error">
        {notice.message}
      </p>
    );
  }
  const text =
    notice.code === "stale_revision"
      ? "Some calls changed since you loaded them, so nothing was decided. Review the new versions."
      : notice.message;
  return (
    <div
      className={`${styles.notice} ${styles.toneWarning}`}
      data-testid="conflict-notice"
      data-code={notice.code}
      data-scope="batch"
      tabIndex={-1}
    >
      <p className={styles.noticeHeadline}>{text}</p>
    </div>
  );
}
