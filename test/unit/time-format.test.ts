import { describe, expect, it } from "vitest";
import { CurrencyCode } from "@/lib/batches/batch-input";
import {
  formatCost,
  formatCosts,
  formatDateTime,
  formatRelative,
  formatShortDateTime,
} from "@/lib/time/format";
import { endOfLocalDay, localDate, startOfLocalDay } from "@/lib/time/local-day";
import { canonicalTimeZone, resolveTimeZone, TimeZoneName } from "@/lib/time/zone";

// lib/time: zones checked, times written in a zone (DST, half-hour offsets), local days as UTC
// instants, costs in the call's currency.

const en = (timeZone: string) => ({ timeZone, locale: "en-GB" });
const iso = (ms: number) => new Date(ms).toISOString();

describe("time zones", () => {
  it("accepts IANA names in their canonical spelling and refuses anything else", () => {
    // an alias spelled properly stays as given (ICU still calls it Asia/Calcutta)
    expect(canonicalTimeZone("Asia/Kolkata")).toBe("Asia/Kolkata");
    // ICU's old names (which browsers report) become the current ones
    expect(canonicalTimeZone("asia/kolkata")).toBe("Asia/Kolkata");
    expect(canonicalTimeZone("Asia/Calcutta")).toBe("Asia/Kolkata");
    expect(canonicalTimeZone("Europe/Kiev")).toBe("Europe/Kyiv");
    expect(canonicalTimeZone("europe/berlin")).toBe("Europe/Berlin");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("America/Argentina/Buenos_Aires")).toBe(
      "America/Argentina/Buenos_Aires",
    );
    for (const bad of ["Mars/Olympus_Mons", "+05:30", "", "Europe/Berlin; drop", "x".repeat(80)])
      expect(canonicalTimeZone(bad), bad).toBeNull();
  });

  it("validates with zod: a clear issue for an unknown zone", () => {
    expect(TimeZoneName.parse("asia/tokyo")).toBe("Asia/Tokyo");
    const result = TimeZoneName.safeParse("Atlantis/Capital");
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.message).toBe("'Atlantis/Capital' is not an IANA time zone");
  });

  it("resolves a person's own zone, else the browser's, else UTC", () => {
    expect(resolveTimeZone("Asia/Tokyo", "Europe/Paris")).toEqual({
      timeZone: "Asia/Tokyo",
      source: "person",
    });
    expect(resolveTimeZone(null, "Europe/Paris")).toEqual({
      timeZone: "Europe/Paris",
      source: "browser",
    });
    // A forged cookie or a zone this runtime no longer knows falls through, never throws.
    expect(resolveTimeZone("Nowhere/Else", "<script>")).toEqual({
      timeZone: "UTC",
      source: "default",
    });
  });
});

describe("formatting times", () => {
  // 2026-03-08: New York springs forward at 02:00 local (07:00 UTC).
  const beforeJump = Date.parse("2026-03-08T06:59:59Z");
  const afterJump = Date.parse("2026-03-08T07:00:00Z");

  it("writes the exact time in the zone, the zone said, across a DST change", () => {
    expect(formatDateTime(iso(beforeJump), en("America/New_York"))).toBe(
      "8 Mar 2026, 01:59:59 GMT-5",
    );
    expect(formatDateTime(iso(afterJump), en("America/New_York"))).toBe(
      "8 Mar 2026, 03:00:00 GMT-4",
    );
    expect(formatDateTime(afterJump, en("UTC"))).toBe("8 Mar 2026, 07:00:00 UTC");
  });

  it("handles half-hour and quarter-hour offsets", () => {
    expect(formatDateTime(afterJump, en("Asia/Kolkata"))).toBe("8 Mar 2026, 12:30:00 GMT+5:30");
    expect(formatDateTime(afterJump, en("Asia/Kathmandu"))).toBe("8 Mar 2026, 12:45:00 GMT+5:45");
  });

  it("gives the year in short form only when it is not this year where the viewer is", () => {
    const newYearsEve = Date.parse("2025-12-31T20:00:00Z"); // already 2026 in Kolkata
    const now = Date.parse("2026-06-01T00:00:00Z");
    expect(formatShortDateTime(newYearsEve, now, en("Asia/Kolkata"))).toBe("1 Jan, 01:30");
    expect(formatShortDateTime(newYearsEve, now, en("UTC"))).toBe("31 Dec 2025, 20:00");
  });

  it("leaves a string that is not a time as it was, and says how long ago", () => {
    expect(formatDateTime("not a time", en("UTC"))).toBe("not a time");
    const now = Date.parse("2026-03-08T12:00:00Z");
    expect(formatRelative("2026-03-08T11:56:00Z", now)).toBe("4 min ago");
    expect(formatRelative("2026-03-08T12:05:00Z", now)).toBe("in 5 min");
    expect(formatRelative("2026-03-08T11:59:58Z", now)).toBe("just now");
  });
});

describe("local days", () => {
  const at = (day: string, zone: string) => ({
    start: iso(startOfLocalDay(day, zone)),
    end: iso(endOfLocalDay(day, zone)),
    hours: (endOfLocalDay(day, zone) + 1 - startOfLocalDay(day, zone)) / 3_600_000,
  });

  it("a day in a +05:30 zone begins and ends half past the UTC hour", () => {
    expect(at("2026-03-08", "Asia/Kolkata")).toEqual({
      start: "2026-03-07T18:30:00.000Z",
      end: "2026-03-08T18:29:59.999Z",
      hours: 24,
    });
  });

  it("DST days are 23 and 25 hours long", () => {
    expect(at("2026-03-08", "America/New_York")).toEqual({
      start: "2026-03-08T05:00:00.000Z",
      end: "2026-03-09T03:59:59.999Z",
      hours: 23,
    });
    expect(at("2026-11-01", "America/New_York")).toEqual({
      start: "2026-11-01T04:00:00.000Z",
      end: "2026-11-02T04:59:59.999Z",
      hours: 25,
    });
  });

  it("a day whose midnight does not exist begins at its first real instant", () => {
    // Havana springs forward at midnight: 8 March 2026 begins at 01:00 local.
    const start = startOfLocalDay("2026-03-08", "America/Havana");
    expect(formatDateTime(start, en("America/Havana"))).toBe("8 Mar 2026, 01:00:00 GMT-4");
    expect(localDate(start - 1, "America/Havana")).toBe("2026-03-07");
  });
});

describe("costs in the call's currency", () => {
  it("formats with the currency's own decimals", () => {
    expect(formatCost(12.5)).toBe("$12.50");
    expect(formatCost(12.5, "EUR")).toBe("€12.50");
    expect(formatCost(1234.5, "JPY")).toBe("¥1,235");
    expect(formatCost(1.2345, "KWD")).toMatch(/^KWD\s1\.235$/); // three decimals
  });

  it("never shows a small nonzero estimate as zero", () => {
    expect(formatCost(0.0035)).toBe("$0.0035");
    expect(formatCost(0.35, "JPY")).toBe("¥0.35");
    expect(formatCost(0, "JPY")).toBe("¥0");
  });

  it("adds up per currency, and survives a code Intl refuses", () => {
    expect(
      formatCosts([
        { amount: 10, currency: "USD" },
        { amount: 300, currency: "JPY" },
        { amount: 2.5, currency: "USD" },
      ]),
    ).toBe("$12.50 + ¥300");
    expect(formatCost(12, "US")).toBe("12 US");
    expect(formatCost(Number.NaN)).toBe("—");
  });

  it("takes ISO 4217 codes only, in capitals", () => {
    expect(CurrencyCode.parse("eur")).toBe("EUR");
    expect(CurrencyCode.parse("JPY")).toBe("JPY");
    for (const bad of ["EURO", "E1R", "ZZZ", ""])
      expect(CurrencyCode.safeParse(bad).success, bad).toBe(false);
  });
});
