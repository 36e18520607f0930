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

export function RunStatusBadge({ status }: { status: RunView["status"] }) {
  const { label, tone } = RUN_STATUS[status];
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
