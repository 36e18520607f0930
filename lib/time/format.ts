// The one place times and costs are formatted. The absolute and cost formats are the review
// card's own (the card ships as a standalone package, so the implementation lives in its folder
// and is re-exported here); this adds the relative wording and names the app's defaults.

export {
  formatAgo,
  formatCost,
  formatCosts,
  formatDateTime,
  formatShortDateTime,
  type TimeFormat,
} from "@/components/review-card/format";

/** "just now", "40 s ago", "4 min ago", "2 h ago", "3 d ago"; "in 5 min" for a time ahead. */
export function formatRelative(at: string | number, nowMs: number): string {
  const ms = typeof at === "number" ? at : Date.parse(at);
  if (Number.isNaN(ms)) return "";
  const delta = Math.round((nowMs - ms) / 1000);
  const seconds = Math.abs(delta);
  if (seconds < 5) return "just now";
  const span =
    seconds < 90
      ? `${seconds} s`
      : seconds < 90 * 60
        ? `${Math.round(seconds / 60)} min`
        : seconds < 36 * 3600
          ? `${Math.round(seconds / 3600)} h`
          : `${Math.round(seconds / 86400)} d`;
  return delta >= 0 ? `${span} ago` : `in ${span}`;
}
