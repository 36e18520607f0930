import type { QueueRole } from "@/db/schema";

/** What "I'm reviewing this" does for the others, per queue setting (create and edit forms). */
export const CLAIM_MODE_OPTIONS = [
  { value: "mark", label: "Mark: show who is reviewing" },
  { value: "lock", label: "Lock: only the reviewer may decide" },
] as const;

export const ROLE_LABEL: Record<QueueRole, string> = {
  reviewer: "Reviewer",
  lead: "Lead",
  admin: "Admin",
};

/** 3600 → "1 h", 90 → "1 min 30 s": timeouts are set in seconds but read in the largest unit. */
export function formatDuration(totalSecs: number): string {
  const units: [number, string][] = [
    [86400, "d"],
    [3600, "h"],
    [60, "min"],
    [1, "s"],
  ];
  const parts: string[] = [];
  let rest = totalSecs;
  for (const [size, label] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${label}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join(" ") || "0 s";
}

/** A form field as a whole number, or the text itself so the server's validation names the problem. */
export function wholeNumber(value: FormDataEntryValue | null): number | string {
  const text = String(value ?? "").trim();
  return /^\d+$/.test(text) ? Number(text) : text;
}
