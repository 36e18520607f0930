// Formatting for the run pages that is not about time (times: lib/time/format.ts, <Time>).

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
