// Calendar days in a time zone as UTC instants: "decided on 8 March" means 8 March where the
// reviewer is, which starts and ends at different instants in New York and in Kolkata, and is 23
// hours long in New York that day (DST begins). Zones are checked by lib/time/zone.ts first.

const DAY_MS = 86_400_000;
/** wider than any zone's offset from UTC (−12 h … +14 h) */
const SEARCH_MS = 26 * 3_600_000;

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** "2026-03-08": the calendar date at `ms` in `timeZone`. */
export function localDate(ms: number, timeZone: string): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    // en-CA writes dates as YYYY-MM-DD, which compare as text in calendar order.
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    dayFormats.set(timeZone, format);
  }
  return format.format(ms);
}

/**
 * The first instant whose local date is `day` or later. Found by bisection rather than by offset
 * arithmetic, so a day that does not begin at 00:00 (a DST jump at midnight, as in some zones)
 * still begins at its first real instant.
 */
export function startOfLocalDay(day: string, timeZone: string): number {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(utcMidnight)) throw new RangeError(`not a date: ${day}`);
  let before = utcMidnight - SEARCH_MS; // local date certainly earlier
  let after = utcMidnight + SEARCH_MS; // local date certainly `day` or later
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (localDate(middle, timeZone) >= day) after = middle;
    else before = middle;
  }
  return after;
}

/** The last millisecond of the local `day` (the next day's first instant, less one). */
export function endOfLocalDay(day: string, timeZone: string): number {
  const next = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  return startOfLocalDay(next, timeZone) - 1;
}

const timeFormats = new Map<string, Intl.DateTimeFormat>();

/** "2026-03-08 09:00": the local date and time (to the minute) at `ms` in `timeZone`. */
function localDateTime(ms: number, timeZone: string): string {
  let format = timeFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    timeFormats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/**
 * The first instant at which the local clock of `day` shows `time` ("09:00") or later: 09:00 on
 * a day whose night had a DST jump is still 09:00 on the wall clock (not midnight plus 9 hours).
 * Bisection, as startOfLocalDay.
 */
export function startOfLocalTime(day: string, time: string, timeZone: string): number {
  const target = `${day} ${time}`;
  const utc = Date.parse(`${day}T${time}:00Z`);
  if (Number.isNaN(utc)) throw new RangeError(`not a date and time: ${target}`);
  let before = utc - SEARCH_MS;
  let after = utc + SEARCH_MS;
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (localDateTime(middle, timeZone) >= target) after = middle;
    else before = middle;
  }
  return after;
}
