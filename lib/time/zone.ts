import { z } from "zod";
import { DEFAULT_TIME_ZONE, type TimeZoneSource } from "./constants";

// Which time zone a person sees times in: their own choice (users.time_zone) if they made one,
// else the zone their browser reports (a cookie set by the root layout's boot script), else UTC.
// Every zone that comes in — from a form, the API or a cookie anyone can write — is checked here.

export { APP_LOCALE, DEFAULT_TIME_ZONE, TIME_ZONE_COOKIE } from "./constants";
export type { TimeZoneSource };

// An IANA name ("Asia/Kolkata", "America/Argentina/Buenos_Aires", "UTC", "Etc/GMT+5"). Newer ICU
// versions also accept raw offsets ("+05:30"), which have no DST rules and no name: refused.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;

/** Each part capitalized, as IANA writes them ("America/Port-au-Prince" counts: it starts so). */
const PROPERLY_CASED = /^[A-Z][^/]*(?:\/[A-Z][^/]*)*$/;

/**
 * The zone's proper spelling, or null when the runtime's time-zone database does not know it.
 * A properly spelled alias stays as given: ICU's canonical name for Asia/Kolkata is still
 * Asia/Calcutta, and a person in Kolkata should see the name their browser and they use. Any
 * other spelling ("europe/berlin") becomes ICU's.
 */
export function canonicalTimeZone(value: string): string | null {
  if (value.length > 64 || !ZONE_NAME.test(value)) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null; // RangeError: an unknown zone
  }
  const spelled =
    value.toLowerCase() === resolved.toLowerCase() || !PROPERLY_CASED.test(value)
      ? resolved
      : value;
  return CURRENT_NAMES[spelled] ?? spelled;
}

// ICU (in Node and in Chromium) still answers some zones by names IANA has since replaced: a
// browser in Kolkata reports Asia/Calcutta. People know the current names; both are accepted.
const CURRENT_NAMES: Record<string, string> = {
  "Asia/Calcutta": "Asia/Kolkata",
  "Asia/Katmandu": "Asia/Kathmandu",
  "Asia/Saigon": "Asia/Ho_Chi_Minh",
  "Asia/Rangoon": "Asia/Yangon",
  "Europe/Kiev": "Europe/Kyiv",
  "America/Buenos_Aires": "America/Argentina/Buenos_Aires",
  "Atlantic/Faeroe": "Atlantic/Faroe",
  "Pacific/Truk": "Pacific/Chuuk",
  "Pacific/Ponape": "Pacific/Pohnpei",
};

export function isTimeZone(value: string): boolean {
  return canonicalTimeZone(value) !== null;
}

/** An IANA time zone, in its canonical spelling. */
export const TimeZoneName = z
  .string()
  .max(64)
  .transform((value, ctx) => {
    const zone = canonicalTimeZone(value);
    if (zone === null) {
      ctx.addIssue({ code: "custom", message: `'${value}' is not an IANA time zone` });
      return z.NEVER;
    }
    return zone;
  })
  .meta({ description: 'an IANA time zone name, e.g. "Europe/Berlin"', example: "Europe/Berlin" });

export type ViewerTimeZone = { timeZone: string; source: TimeZoneSource };

/** The zone to show a person: their override, else the browser's (if valid), else UTC. */
export function resolveTimeZone(
  override: string | null | undefined,
  browser: string | null | undefined,
): ViewerTimeZone {
  const own = override ? canonicalTimeZone(override) : null;
  if (own) return { timeZone: own, source: "person" };
  const reported = browser ? canonicalTimeZone(browser) : null;
  if (reported) return { timeZone: reported, source: "browser" };
  return { timeZone: DEFAULT_TIME_ZONE, source: "default" };
}
