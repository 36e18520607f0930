import type { ReactNode } from "react";
import type { BatchView, RunView } from "@/lib/read-models/batch-run-views";
import styles from "./badges.module.css";

export type Tone = "neutral" | "info" | "ok" | "danger" | "warn";

export function Badge({ tone, children }: { tone: Tone; children: ReactNode }) {
  return <span className={`${styles.badge} ${styles[tone]}`}>{children}</span>;
}

const RUN_STATUS: Record<RunView["status"], { label: string; tone: Tone }> = {
  running: { label: "Running", tone: "info" },
  waiting_approval: { label: "Waiting for approval", tone: "warn" },
  ready: { label: "Ready to resume", tone: "info" },
  resuming: { label: "Resuming", tone: "info" },
  completed: { label: "Completed", tone: "ok" },
  failed: { label: "Failed", tone: "danger" },
  cancelled: { label: "Cancelled", tone: "neutral" },
};

/**
 * A run's state as its page says it. A run that is `running` with a card still pending is an MCP
 * gateway's session waiting on a gated call: the gateway records each call on the session's run
 * without pausing it, so the status alone would say "Running" while a person is being asked.
 */
export function runState(run: Pick<RunView, "status" | "batches">): { label: string; tone: Tone } {
  const waiting = (run.batches ?? []).filter((batch) => batch.status === "pending").length;
  if (run.status === "running" && waiting > 0) {
    return {
      label: `Running · waiting on ${waiting === 1 ? "a gated call" : `${waiting} gated calls`}`,
      tone: "warn",
    };
  }
  return RUN_STATUS[run.status];
}

export function RunStatusBadge({ run }: { run: Pick<RunView, "status" | "batches"> }) {
  const { label, tone } = runState(run);
  return (
    <span data-testid="run-status">
      <Badge tone={tone}>{label}</Badge>
    </span>
  );
}

/** A batch's state in one word or two: "Pending", "Approved", "Expired · rejected", "Withdrawn". */
export function batchState(batch: Pick<BatchView, "status" | "outcome">): {
  label: string;
  tone: Tone;
} {
  if (batch.status === "pending") return { label: "Pending", tone: "warn" };
  if (batch.status === "cancelled") return { label: "Withdrawn", tone: "neutral" };
  const outcome =
    batch.outcome === "approved"
      ? { label: "Approved", tone: "ok" as const }
      : batch.outcome === "rejected"
        ? { label: "Rejected", tone: "danger" as const }
        : { label: "Mixed", tone: "warn" as const };
  return batch.status === "expired"
    ? { label: `Expired · ${outcome.label.toLowerCase()}`, tone: outcome.tone }
    : outcome;
}

export function BatchStateBadge({ batch }: { batch: Pick<BatchView, "status" | "outcome"> }) {
  const { label, tone } = batchState(batch);
  return <Badge tone={tone}>{label}</Badge>;
}
