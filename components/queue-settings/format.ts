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

/**
 * A number field's value as a number, so the server's validation words the real problem ("1 or
 * more" for -5, "a whole number" for 1.5). Only empty or non-numeric text stays text: the server
 * then answers that a number is needed. (It once kept anything but digits as text, so -5 was
 * refused as "expected number, received string".)
 */
export function numberField(value: FormDataEntryValue | null): number | string {
  const text = String(value ?? "").trim();
  const number = text === "" ? Number.NaN : Number(text);
  return Number.isFinite(number) ? number : text;
}
