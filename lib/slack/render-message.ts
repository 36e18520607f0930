import type { BatchView, CallView } from "@/lib/read-models/batch-run-views";

// A card as a Slack Block Kit message: who asks, the tool, summary, risks, cost and deadline, and
// while it is pending in this channel's queue the Approve / Reject / Open buttons; once settled
// (anywhere: the browser, another Slack user, a policy, the deadline) the outcome and who decided
// in place of the buttons. Everything an agent wrote is escaped: Slack's mrkdwn turns "<!channel>"
// into a mention of everyone and "<https://…|text>" into a disguised link. Arguments stay out,
// as they stay out of email: channels are read by more people than the queue's reviewers.

export const APPROVE_ACTION = "countersign_approve";
export const REJECT_ACTION = "countersign_reject";
export const OPEN_ACTION = "countersign_open";
export const REJECT_MODAL = "countersign_reject_modal";
export const REASON_BLOCK = "reason";
export const REASON_INPUT = "reason_input";

/** What an Approve or Reject button carries: the card and the revisions shown. */
export type ButtonValue = { b: string; r: Record<string, number> };

/** Slack refuses a button value over 2000 characters; a card that big is decided on the page. */
const MAX_BUTTON_VALUE = 2000;
const MAX_FIELD = 500;

/** Agent text made inert for mrkdwn (&, <, > are the only characters Slack wants escaped). */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function clip(text: string, max = MAX_FIELD): string {
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").trim();
  return escapeMrkdwn(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

/** Slack shows <!date^…> in each reader's own time zone; the fallback is UTC. */
function slackDate(iso: string | null): string {
  if (!iso) return "none";
  const secs = Math.floor(Date.parse(iso) / 1000);
  return `<!date^${secs}^{date_short_pretty} {time}|${iso.slice(0, 16).replace("T", " ")} UTC>`;
}

const money = (amount: number) =>
  amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** "by Dana", "at the deadline", "by a policy": who or what decided a call. */
function decider(call: CallView): string {
  const d = call.decision!;
  if (d.by) return `by ${clip(d.by.name, 100)}`;
  if (d.source === "timeout") return "at the deadline";
  return d.source === "memory" ? "by a remembered approval" : `by ${d.source}`;
}

/** The line that says where the card stands, derived from its calls' decisions. */
export function outcomeLine(batch: BatchView, inThisQueue: boolean): string {
  if (batch.status === "cancelled")
    return `:no_entry_sign: Cancelled by the agent${batch.cancelReason ? `: ${clip(batch.cancelReason)}` : ""}`;
  if (batch.status === "pending") {
    if (!inThisQueue) return ":arrow_right: Escalated: this card moved to another queue.";
    const votes = batch.calls.flatMap((c) => c.votes.filter((v) => v.outcome === "approved"));
    const needed = Math.max(0, ...batch.calls.map((c) => c.requiredApprovals));
    const voters = [...new Set(votes.map((v) => clip(v.reviewer.name, 100)))];
    return voters.length > 0
      ? `:hourglass_flowing_sand: Waiting: approved so far by ${voters.join(", ")} (${needed} approvals needed)`
      : ":hourglass_flowing_sand: Waiting for a decision";
  }
  const decided = batch.calls.filter((c) => c.decision);
  const lines = decided.map((call) => {
    const d = call.decision!;
    const verb = d.outcome === "approved" ? "Approved" : "Rejected";
    const reason = d.reason ? `: “${clip(d.reason)}”` : "";
    const tool = batch.calls.length > 1 ? ` \`${clip(call.toolName, 100)}\`` : "";
    return `${d.outcome === "approved" ? ":white_check_mark:" : ":x:"} ${verb}${tool} ${decider(call)}${reason}`;
  });
  if (lines.length === 0) return `Settled (${batch.status})`;
  return lines.join("\n");
}

export function buttonValue(batch: BatchView): string | null {
  const value: ButtonValue = {
    b: batch.id,
    r: Object.fromEntries(
      batch.calls.filter((c) => c.status === "pending").map((c) => [c.id, c.revision]),
    ),
  };
  const text = JSON.stringify(value);
  return text.length <= MAX_BUTTON_VALUE ? text : null;
}

/**
 * The message for `batch` as posted in the channel of `queue`. A card that moved on to another
 * queue shows this queue's name and no new deadline: the channel does not learn where it went.
 */
export function renderCardMessage(batch: BatchView, queue: { id: string; name: string }) {
  const tools = [...new Set(batch.calls.map((c) => clip(c.toolName, 100)))];
  const summaries = batch.calls.flatMap((c) => (c.summary ? [clip(c.summary)] : []));
  if (batch.plan?.summary) summaries.unshift(clip(batch.plan.summary));
  const risks = [
    ...new Set([...(batch.plan?.risks ?? []), ...batch.calls.flatMap((c) => c.risks)]),
  ].map((r) => clip(r, 200));
  const costs = batch.calls.flatMap((c) => (c.costEstimate === null ? [] : [c.costEstimate]));
  const agent = clip(batch.agent.name, 100);
  const what = batch.kind === "plan" ? "approval of a plan" : tools.join(", ");
  const inThisQueue = batch.queue.id === queue.id;
  const open = batch.status === "pending" && inThisQueue;
  const value = open ? buttonValue(batch) : null;

  const buttons: Record<string, unknown>[] = [];
  if (value) {
    buttons.push(
      {
        type: "button",
        action_id: APPROVE_ACTION,
        style: "primary",
        text: { type: "plain_text", text: "Approve" },
        value,
      },
      {
        type: "button",
        action_id: REJECT_ACTION,
        style: "danger",
        text: { type: "plain_text", text: "Reject…" },
        value,
      },
    );
  }
  buttons.push({
    type: "button",
    action_id: OPEN_ACTION,
    text: { type: "plain_text", text: "Open" },
    url: batch.reviewUrl,
  });

  const blocks: Record<string, unknown>[] = [
    {
      type: "section",
      text: { type: "mrkdwn", text: `*${agent}* asks for *${what}*` },
    },
    {
      type: "section",
      fields: [
        { type: "mrkdwn", text: `*Queue*\n${clip(queue.name, 100)}` },
        {
          type: "mrkdwn",
          text: `*${tools.length > 1 ? "Tools" : "Tool"}*\n${tools.join(", ") || "none"}`,
        },
        {
          type: "mrkdwn",
          text: `*Cost*\n${costs.length > 0 ? money(costs.reduce((a, b) => a + b, 0)) : "not estimated"}`,
        },
        {
          type: "mrkdwn",
          text: `*Deadline*\n${inThisQueue ? slackDate(batch.expiresAt) : "not this queue's"}`,
        },
      ],
    },
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: `*Summary*\n${summaries.join(" · ") || "none given"}\n*Risks*\n${risks.join(" · ") || "none stated"}`.slice(
          0,
          2900,
        ),
      },
    },
    {
      type: "context",
      elements: [{ type: "mrkdwn", text: outcomeLine(batch, inThisQueue).slice(0, 2900) }],
    },
  ];
  if (open && !value)
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: "This card has too many calls to decide here: open it." }],
    });
  blocks.push({ type: "actions", block_id: "countersign_actions", elements: buttons });

  // `text` is what notifications and screen readers show when blocks cannot be
  const text =
    `${batch.agent.name.slice(0, 100)} asks for ${batch.kind === "plan" ? "approval of a plan" : batch.calls.map((c) => c.toolName).join(", ")}`.slice(
      0,
      300,
    );
  return { text: escapeMrkdwn(text), blocks };
}

/** The modal that asks a rejecting reviewer for the reason. */
export function rejectModal(batch: BatchView, metadata: string) {
  return {
    type: "modal",
    callback_id: REJECT_MODAL,
    private_metadata: metadata,
    title: { type: "plain_text", text: "Reject" },
    submit: { type: "plain_text", text: "Reject" },
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: `Reject *${clip(batch.agent.name, 100)}*'s request (${clip(batch.calls.map((c) => c.toolName).join(", "), 200)}).`,
        },
      },
      {
        type: "input",
        block_id: REASON_BLOCK,
        label: { type: "plain_text", text: "Reason (the agent sees it)" },
        element: {
          type: "plain_text_input",
          action_id: REASON_INPUT,
          multiline: true,
          max_length: 4000,
        },
      },
    ],
  };
}
