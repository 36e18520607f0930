import { publicBaseUrl } from "@/lib/config/listen-address";
import type { RenderedMail } from "./render-card-email";

// The weekly policy-suggestions email to a queue's leads (lib/policies/suggestions-digest.ts).
// Tool names come from agents: untrusted, escaped in HTML and kept on one line. Arguments stay out
// of mail (render-card-email.ts says why); a bound is shown as the rule states it.

type Item = {
  tool: string;
  conditions: { path: string; op: string; value: unknown }[];
  approved: number;
};

const escapeHtml = (text: string) =>
  text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
const oneLine = (text: string, max: number) => {
  const flat = text.replace(/[\r\n\t]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};
const OPS: Record<string, string> = {
  atMost: "≤",
  prefix: "starts with",
  equals: "=",
  glob: "matches",
};

function line(item: Item): string {
  const bound = item.conditions
    .map((c) => `${c.path} ${OPS[c.op] ?? c.op} ${oneLine(String(c.value), 80)}`)
    .join(", ");
  return `Allow ${oneLine(item.tool, 80)}${bound ? ` where ${bound}` : ""} — approved ${item.approved} times by hand, never refused`;
}

export function renderSuggestionsMail(
  detail: Record<string, unknown>,
  queueId: string,
): RenderedMail {
  const queue = oneLine(String(detail.queue ?? "your queue"), 60);
  const items = (detail.suggestions as Item[] | undefined) ?? [];
  const link = `${publicBaseUrl()}/suggestions?queue=${encodeURIComponent(queueId)}`;
  const subject = `${items.length} new policy suggestion${items.length === 1 ? "" : "s"} for ${queue}`;
  const intro = `Your reviewers have been approving these calls in ${queue} by hand. Each could be a rule; every one comes with its backtest.`;
  return {
    subject,
    text: [intro, "", ...items.map((i) => `- ${line(i)}`), "", `Review them: ${link}`].join("\n"),
    html: `<p>${escapeHtml(intro)}</p><ul>${items.map((i) => `<li>${escapeHtml(line(i))}</li>`).join("")}</ul><p><a href="${escapeHtml(link)}">Review the suggestions</a></p>`,
  };
}
