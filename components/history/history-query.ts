// The history page's URL: the filters it carries, and the links built from them.

export const FILTER_KEYS = [
  "queue",
  "agent",
  "tool",
  "outcome",
  "decidedBy",
  "source",
  "kind",
  "from",
  "to",
] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type FilterValues = Partial<Record<FilterKey, string>>;

type SearchParams = Record<string, string | string[] | undefined>;

const first = (value: string | string[] | undefined) =>
  (Array.isArray(value) ? value[0] : value)?.trim() || undefined;

/** The non-empty filters of the page's search params (a GET form sends empty ones as ""). */
export function filtersOf(params: SearchParams): FilterValues {
  const filters: FilterValues = {};
  for (const key of FILTER_KEYS) {
    const value = first(params[key]);
    if (value) filters[key] = value;
  }
  return filters;
}

export function cursorOf(params: SearchParams): string | undefined {
  return first(params.cursor);
}

export function queryString(values: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** The export of what the page shows: its filters, the From/To days in the page's zone. */
export function exportHref(
  filters: FilterValues,
  format: "csv" | "json",
  timeZone: string,
): string {
  const dated = filters.from !== undefined || filters.to !== undefined;
  return `/api/v1/history/export${queryString({ format, ...filters, timeZone: dated ? timeZone : undefined })}`;
}
