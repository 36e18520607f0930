import styles from "./review-card.module.css";
import type { Batch, CallStatus } from "./types";

type Tone = "approved" | "rejected" | "pending" | "mixed" | "muted";

const TONE_CLASS: Record<Tone, string | undefined> = {
  approved: styles.badgeApproved,
  rejected: styles.badgeRejected,
  pending: styles.badgePending,
  mixed: styles.badgeMixed,
  muted: styles.badgeMuted,
};

function Badge({ tone, children }: { tone: Tone; children: string }) {
  return (
    <span className={`${styles.badge} ${TONE_CLASS[tone] ?? ""}`} data-tone={tone}>
      {children}
    </span>
  );
}

export function BatchStatusBadge({ batch }: { batch: Pick<Batch, "status" | "outcome"> }) {
  switch (batch.status) {
    case "pending":
      return <Badge tone="pending">Pending</Badge>;
    case "expired":
      return <Badge tone="muted">Expired</Badge>;
    case "cancelled":
      return <Badge tone="muted">Cancelled</Badge>;
    case "decided":
      if (batch.outcome === "approved") return <Badge tone="approved">Approved</Badge>;
      if (batch.outcome === "rejected") return <Badge tone="rejected">Rejected</Badge>;
      return <Badge tone="mixed">Partly approved</Badge>;
  }
}

const CALL_BADGE: Record<CallStatus, [Tone, string]> = {
  pending: ["pending", "Pending"],
  approved: ["approved", "Approved"],
  rejected: ["rejected", "Rejected"],
  expired: ["muted", "Expired"],
  cancelled: ["muted", "Cancelled"],
};

export function CallStatusBadge({ status }: { status: CallStatus }) {
  const [tone, text] = CALL_BADGE[status];
  return <Badge tone={tone}>{text}</Badge>;
}
