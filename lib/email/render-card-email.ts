import type { NotificationKind } from "@/db/schema";
import { publicBaseUrl } from "@/lib/config/listen-address";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { APP_LOCALE } from "@/lib/time/constants";
import { formatCosts, formatDateTime } from "@/lib/time/format";

// Notification emails, as HTML and as plain text. Everything an agent wrote (tool names,
// summaries, risks, the plan, its own name) is untrusted: HTML-escaped in the HTML part, and
// stripped of line breaks where it goes into a header. The call's arguments stay out of mail on
// purpose: mailboxes are kept, forwarded and indexed outside Countersign, and arguments are where
// customer data and credentials end up; the card shows them after sign-in.

/** the notifications about one card (a suggestions digest is about a queue: its own mail) */
export type CardKind = Exclude<NotificationKind, "suggestions">;

export type CardItem = {
  kind: CardKind;
  batch: BatchView;
  /** the signed, single-use link to the card */
  link: string;
  /** what happened beyond the card: { outcome, by } for decisions, { from, to } for escalations */
  detail: Record<string, unknown>;
};

export type RenderedMail = { subject: string; text: string; html: string };

const MAX_FIELD = 500;

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** Agent text for one line: control characters and line breaks become spaces, and it is cut. */
function oneLine(text: string, max = MAX_FIELD): string {
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The deadline in the recipient's zone, the zone said ("25 Nov 2026, 17:05:00 GMT+5:30"). */
function when(iso: string | null, timeZone: string): string {
  return iso ? formatDateTime(iso, { timeZone, locale: APP_LOCALE }) : "none";
}

/** The card's facts, as label → value lines (plain text; escaped later for HTML). */
function facts(item: CardItem, timeZone: string): { label: string; value: string }[] {
  const { batch } = item;
  const tools = [...new Set(batch.calls.map((c) => oneLine(c.toolName, 100)))];
  const summaries = batch.calls.flatMap((c) => (c.summary ? [oneLine(c.summary)] : []));
  if (batch.plan?.summary) summaries.unshift(oneLine(batch.plan.summary));
  const risks = [
    ...new Set([...(batch.plan?.risks ?? []), ...batch.calls.flatMap((c) => c.risks)]),
  ].map((r) => oneLine(r, 200));
  const costs = batch.calls.flatMap((c) =>
    c.costEstimate === null ? [] : [{ amount: c.costEstimate, currency: c.costCurrency }],
  );
  const lines = [
    { label: "Who asks", value: oneLine(batch.agent.name, 100) },
    { label: "Queue", value: oneLine(batch.queue.name, 100) },
    {
      label: batch.kind === "plan" ? "Plan" : tools.length > 1 ? "Tools" : "Tool",
      value: batch.kind === "plan" ? "a plan to approve before work starts" : tools.join(", "),
    },
    { label: "Summary", value: summaries.length > 0 ? summaries.join(" · ") : "none given" },
    { label: "Risks", value: risks.length > 0 ? risks.join(" · ") : "none stated" },
    {
      label: "Cost",
      value: costs.length > 0 ? formatCosts(costs) : "not estimated",
    },
    { label: "Deadline", value: when(batch.expiresAt, timeZone) },
  ];
  if (item.kind === "decision") {
    const by = item.detail.by as string | null;
    const outcome = String(item.detail.outcome ?? "decided");
    lines.unshift({
      label: "Outcome",
      value: by ? `${outcome} (by ${oneLine(by, 100)})` : outcome,
    });
  }
  if (item.kind === "escalation") {
    lines.unshift({ label: "Escalated from", value: oneLine(String(item.detail.from ?? ""), 100) });
  }
  return lines;
}

function headline(item: CardItem): string {
  const agent = oneLine(item.batch.agent.name, 60);
  const what =
    item.batch.kind === "plan"
      ? "a plan"
      : oneLine(item.batch.calls.map((c) => c.toolName).join(", "), 80);
  switch (item.kind) {
    case "new_card":
      return `${agent} asks to run ${what}`;
    case "deadline":
      return `Deadline soon: ${agent} asks to run ${what}`;
    case "escalation":
      return `Escalated to ${oneLine(item.batch.queue.name, 60)}: ${agent} asks to run ${what}`;
    case "decision": {
      const outcome = String(item.detail.outcome ?? "decided");
      return `${outcome[0]!.toUpperCase()}${outcome.slice(1)}: ${agent}'s ${what}`;
    }
  }
}

const ACTION_TEXT: Record<CardKind, string> = {
  new_card: "Review it",
  deadline: "Review it before the deadline",
  escalation: "Review it",
  decision: "See the card",
};

const LINK_NOTE =
  "The link works once, for you, and expires; it opens the card (after sign-in) and decides nothing by itself.";

function textBlock(item: CardItem, timeZone: string): string {
  return [
    headline(item),
    "",
    ...facts(item, timeZone).map((f) => `${f.label}: ${f.value}`),
    "",
    `${ACTION_TEXT[item.kind]}: ${item.link}`,
  ].join("\n");
}

function htmlBlock(item: CardItem, timeZone: string): string {
  const rows = facts(item, timeZone)
    .map(
      (f) =>
        `<tr><th align="left" style="padding:4px 12px 4px 0;color:#555;font-weight:600;vertical-align:top">${escapeHtml(f.label)}</th><td style="padding:4px 0">${escapeHtml(f.value)}</td></tr>`,
    )
    .join("");
  return [
    `<h2 style="font-size:18px;margin:0 0 12px">${escapeHtml(headline(item))}</h2>`,
    `<table role="presentation" style="border-collapse:collapse;font-size:14px">${rows}</table>`,
    `<p style="margin:16px 0"><a href="${escapeHtml(item.link)}" style="background:#1f4fd1;color:#fff;padding:10px 16px;border-radius:6px;text-decoration:none;display:inline-block">${ACTION_TEXT[item.kind]}</a></p>`,
  ].join("\n");
}

const settingsUrl = () => `${publicBaseUrl()}/notifications`;

function footerText(): string {
  return `${LINK_NOTE}\nChange what you receive: ${settingsUrl()}\n`;
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1a1a1a;line-height:1.45;max-width:640px;margin:0 auto;padding:16px">
${body}
<p style="color:#666;font-size:12px;margin-top:24px">${escapeHtml(LINK_NOTE)} <a href="${escapeHtml(settingsUrl())}" style="color:#666">Change what you receive</a>.</p>
</body></html>`;
}

/** One card, one message; its times in the recipient's zone (their own choice, else UTC). */
export function renderCardMail(item: CardItem, timeZone = "UTC"): RenderedMail {
  const subject = `[Countersign] ${headline(item)}`;
  return {
    subject: oneLine(subject, 200),
    text: `${textBlock(item, timeZone)}\n\n${footerText()}`,
    html: page(subject, htmlBlock(item, timeZone)),
  };
}

/** Several cards in one digest message, oldest first, times in the recipient's zone. */
export function renderDigestMail(items: CardItem[], timeZone = "UTC"): RenderedMail {
  const title = `${items.length} card${items.length === 1 ? "" : "s"} for you`;
  const divider = '\n<hr style="border:0;border-top:1px solid #ddd;margin:20px 0">\n';
  return {
    subject: `[Countersign] ${title}`,
    text: `${title}\n\n${items.map((item) => textBlock(item, timeZone)).join("\n\n----\n\n")}\n\n${footerText()}`,
    html: page(
      `[Countersign] ${title}`,
      `<h1 style="font-size:20px;margin:0 0 20px">${title}</h1>\n${items.map((item) => htmlBlock(item, timeZone)).join(divider)}`,
    ),
  };
}
