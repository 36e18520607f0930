// Formatting with a fixed locale and UTC, so the server and the browser render the same text.

const absolute = new Intl.DateTimeFormat("en-GB", {
  timeZone: "UTC",
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});

/** "12 Mar 2025, 14:05:09 UTC" */
export function formatAbsolute(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${absolute.format(ms)} UTC`;
}

const short = new Intl.DateTimeFormat("en-GB", {
  timeZone: "UTC",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});

/** "12 Mar, 14:05" (UTC), with the year when it is not the current one: for dense tables. */
export function formatShort(iso: string, nowMs: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const year = new Date(ms).getUTCFullYear();
  const text = short.format(ms);
  return year === new Date(nowMs).getUTCFullYear() ? text : text.replace(",", ` ${year},`);
}

/** "just now", "40 s ago", "4 min ago", "2 h ago", "3 d ago"; "in 5 min" for a time ahead. */
export function formatRelative(iso: string, nowMs: number): string {
  const ms = Date.parse(iso);
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

/** 0 → "0 B", 1536 → "1.5 KB", 5_400_000 → "5.1 MB" (1 KB = 1,024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

/** Long ids (UUIDv7) shortened for display; show the full id alongside or in a title. */
export function shortId(id: string): string {
  return id.length > 12 ? id.slice(-8) : id;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** JSON for a details panel, cut short past `max` characters. */
export function previewJson(value: unknown, max = 4000): string {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return text.length > max
    ? `${text.slice(0, max)}\n… (${plural(text.length - max, "more character")})`
    : text;
}
