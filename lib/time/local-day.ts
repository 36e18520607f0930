// Calendar days in a time zone as UTC instants: "decided on 8 March" means 8 March where the
// reviewer is, which starts and ends at different instants in New York and in Kolkata, and is 23
// hours long in New York that day (DST begins). Zones are checked by lib/time/zone.ts first.

const DAY_MS = 86_400_000;
/** wider than any zone's offset from UTC (−12 h … +14 h) */
const SEARCH_MS = 26 * 3_600_000;

/** One formatter per zone and shape: building an Intl.DateTimeFormat costs far more than using one. */
function formatterFor(
  cache: Map<string, Intl.DateTimeFormat>,
  timeZone: string,
  options: Intl.DateTimeFormatOptions,
): Intl.DateTimeFormat {
  let format = cache.get(timeZone);
  if (!format)
    cache.set(timeZone, (format = new Intl.DateTimeFormat("en-CA", { timeZone, ...options })));
  return format;
}

/**
 * The first instant whose local text (`localText(ms)`, which only grows with time) is `target` or
 * later, searched within a day either side of `guess`. Bisection rather than offset arithmetic,
 * so a local time that a DST jump skips still maps to its first real instant.
 */
function firstInstantFrom(target: string, guess: number, localText: (ms: number) => string) {
  let before = guess - SEARCH_MS; // local text certainly earlier
  let after = guess + SEARCH_MS; // local text certainly `target` or later
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (localText(middle) >= target) after = middle;
    else before = middle;
  }
  return after;
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** "2026-03-08": the calendar date at `ms` in `timeZone`. */
export function localDate(ms: number, timeZone: string): string {
  // en-CA writes dates as YYYY-MM-DD, which compare as text in calendar order.
  return formatterFor(dayFormats, timeZone, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(ms);
}

/**
 * The first instant whose local date is `day` or later. Found by bisection rather than by offset
 * arithmetic, so a day that does not begin at 00:00 (a DST jump at midnight, as in some zones)
 * still begins at its first real instant.
 */
export function startOfLocalDay(day: string, timeZone: string): number {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(utcMidnight)) throw new RangeError(`not a date: ${day}`);
  return firstInstantFrom(day, utcMidnight, (ms) => localDate(ms, timeZone));
}

/** The last millisecond of the local `day` (the next day's first instant, less one). */
export function endOfLocalDay(day: string, timeZone: string): number {
  const next = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  return startOfLocalDay(next, timeZone) - 1;
}

const timeFormats = new Map<string, Intl.DateTimeFormat>();

/** "2026-03-08 09:00": the local date and time (to the minute) at `ms` in `timeZone`. */
function localDateTime(ms: number, timeZone: string): string {
  const format = formatterFor(timeFormats, timeZone, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/**
 * The first instant at which the local clock of `day` shows `time` ("09:00") or later: 09:00 on
 * a day whose night had a DST jump is still 09:00 on the wall clock (not midnight plus 9 hours).
 */
export function startOfLocalTime(day: string, time: string, timeZone: string): number {
  const target = `${day} ${time}`;
  const utc = Date.parse(`${day}T${time}:00Z`);
  if (Number.isNaN(utc)) throw new RangeError(`not a date and time: ${target}`);
  return firstInstantFrom(target, utc, (ms) => localDateTime(ms, timeZone));
}
