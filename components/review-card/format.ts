// Formatting of times and costs. Pure and dependency-free: the app's shared time module
// (lib/time/format.ts) re-exports these, so the card and every page format a time one way. Each
// takes the zone and locale explicitly: the server and the browser render the same text when they
// are given the same ones (no hydration mismatch), and `undefined` means the runtime's own.

export type TimeFormat = {
  /** an IANA zone ("Asia/Kolkata"); undefined: the runtime's zone */
  timeZone?: string;
  /** a BCP 47 locale ("en-GB"); undefined: the runtime's locale */
  locale?: string;
};

const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

/** Intl formatters are costly to build and a page formats hundreds of times: one per setting. */
function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => T): T {
  let formatter = formatters.get(key) as T | undefined;
  if (!formatter) {
    formatter = make();
    formatters.set(key, formatter);
  }
  return formatter;
}

function currencyFormat(currency: string, locale: string | undefined, small: boolean) {
  return cached(`cur|${locale}|${currency}|${small}`, () => {
    const base = new Intl.NumberFormat(locale, { style: "currency", currency });
    if (!small) return base;
    // A sub-unit estimate keeps two more decimals than the currency has (so $0.0035 is not
    // "$0.00" and ¥0.35 is not "¥0").
    const digits = base.resolvedOptions().maximumFractionDigits ?? 2;
    return new Intl.NumberFormat(locale, {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: Math.max(digits + 2, 2),
    });
  });
}

/**
 * An amount in the ISO 4217 currency the call states: 12.5 → "$12.50", 1234.5 JPY → "¥1,235",
 * 0.0035 USD → "$0.0035". An unknown code shows the number and the code rather than throwing.
 */
export function formatCost(amount: number, currency = "USD", locale = "en-US"): string {
  if (!Number.isFinite(amount)) return "—";
  const small = Math.abs(amount) < 1 && amount !== 0;
  try {
    return currencyFormat(currency, locale, small).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * Several costs, summed per currency (a dollar and a yen do not add up): "$12.50 + ¥300".
 */
export function formatCosts(
  costs: { amount: number; currency: string }[],
  locale = "en-US",
): string {
  const totals = new Map<string, number>();
  for (const { amount, currency } of costs)
    totals.set(currency, (totals.get(currency) ?? 0) + amount);
  return [...totals].map(([currency, sum]) => formatCost(sum, currency, locale)).join(" + ");
}

function dateTimeFormat(format: TimeFormat, withYear: boolean, withSeconds: boolean) {
  const { timeZone, locale } = format;
  return cached(`dt|${locale}|${timeZone}|${withYear}|${withSeconds}`, () => {
    const options: Intl.DateTimeFormatOptions = {
      timeZone,
      day: "numeric",
      month: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    };
    if (withYear) options.year = "numeric";
    if (withSeconds) {
      options.second = "2-digit";
      options.timeZoneName = "short";
    }
    return new Intl.DateTimeFormat(locale, options);
  });
}

/**
 * The exact time in a zone, with the zone said: "12 Mar 2025, 19:35:09 GMT+5:30" (en-GB in
 * Asia/Kolkata), "12 Mar 2025, 14:05:09 UTC". For tooltips and detail panels. A string that is not
 * a time comes back as it was.
 */
export function formatDateTime(at: string | number, format: TimeFormat = {}): string {
  const ms = typeof at === "number" ? at : Date.parse(at);
  if (Number.isNaN(ms)) return String(at);
  return dateTimeFormat(format, true, true).format(ms);
}

/**
 * "12 Mar, 19:35" in the zone, with the year when it is not the current one there: for dense
 * tables (the column header or a tooltip says the zone).
 */
export function formatShortDateTime(at: string | number, nowMs: number, format: TimeFormat = {}) {
  const ms = typeof at === "number" ? at : Date.parse(at);
  if (Number.isNaN(ms)) return String(at);
  const year = (t: number) =>
    cached(
      `y|${format.timeZone}`,
      () => new Intl.DateTimeFormat("en-US", { timeZone: format.timeZone, year: "numeric" }),
    ).format(t);
  return dateTimeFormat(format, year(ms) !== year(nowMs), false).format(ms);
}

/** Same wording as the API's conflict messages: "4 s ago", "3 min ago", "2 h ago", "5 d ago". */
export function formatAgo(thenMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

/** Time left: "4:05", "1:02:03", "3 d 4 h". */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours}:${pad(minutes)}:${pad(seconds)}`;
  return `${minutes}:${pad(seconds)}`;
}

export function parseTime(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/** Long ids (ULIDs, UUIDs) shortened for display; the full id stays in a title. */
export function shortId(id: string): string {
  return id.length > 12 ? `…${id.slice(-8)}` : id;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
