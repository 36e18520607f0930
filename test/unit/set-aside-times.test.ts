import { describe, expect, it } from "vitest";
import { lastFifthBegins, returnsAt, setAsideUntil } from "@/lib/time/set-aside-times";

// When a card set aside ("Not now") comes back: the chosen time, or the start of the last fifth
// of its time if sooner; "tomorrow" is 09:00 on the wall clock of the next day in the zone.

const MIN = 60_000;

describe("setAsideUntil", () => {
  it("adds 15 minutes or an hour", () => {
    const now = Date.UTC(2026, 10, 27, 8, 0);
    expect(setAsideUntil("15m", now, "UTC")).toBe(now + 15 * MIN);
    expect(setAsideUntil("1h", now, "Asia/Tokyo")).toBe(now + 60 * MIN);
  });

  it("is 09:00 on the next calendar day in the zone, across a DST change in the night", () => {
    // 23:30 in Berlin on 28 March 2026; clocks go from 02:00 to 03:00 that night (UTC+1 → +2)
    const lateEvening = Date.UTC(2026, 2, 28, 22, 30);
    expect(setAsideUntil("tomorrow", lateEvening, "Europe/Berlin")).toBe(
      Date.UTC(2026, 2, 29, 7, 0),
    );
    // 00:30 in Berlin on the 29th is already "the 29th": tomorrow is the 30th
    expect(setAsideUntil("tomorrow", Date.UTC(2026, 2, 28, 23, 30), "Europe/Berlin")).toBe(
      Date.UTC(2026, 2, 30, 7, 0),
    );
    // in Kiritimati (UTC+14), 11:00 UTC is already the next day
    expect(setAsideUntil("tomorrow", Date.UTC(2026, 10, 27, 11, 0), "Pacific/Kiritimati")).toBe(
      Date.UTC(2026, 10, 28, 19, 0),
    );
    // and 09:00 in New York the day after Thanksgiving (UTC−5)
    expect(setAsideUntil("tomorrow", Date.UTC(2026, 10, 26, 20, 0), "America/New_York")).toBe(
      Date.UTC(2026, 10, 27, 14, 0),
    );
  });
});

describe("returnsAt", () => {
  it("is the chosen time, or the start of the last fifth of the card's time if sooner", () => {
    const card = { createdAt: 0, expiresAt: 100 * MIN };
    expect(lastFifthBegins(card)).toBe(80 * MIN);
    expect(returnsAt(30 * MIN, card)).toBe(30 * MIN);
    expect(returnsAt(90 * MIN, card)).toBe(80 * MIN);
  });
});
