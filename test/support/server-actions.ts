import { readFileSync } from "node:fs";
import { join } from "node:path";

// Calls the app's server actions over HTTP, as the browser does: the action's id from the build's
// manifest in `Next-Action`, the arguments as a React Flight reply, the answer a Flight payload.
// Every server action is a public endpoint, so tests must be able to call it without the UI.

type ManifestEntry = {
  workers: Record<string, unknown>;
  filename?: string;
  exportedName?: string;
};

export type ServerActionRef = {
  id: string;
  /** the source file, as the manifest names it: `app/(reviewer)/actions.ts` */
  filename: string;
  exportedName: string;
  /** the pages whose bundles hold the action: `app/(reviewer)/queue/page` */
  workers: string[];
};

/** Every server action of the production build in `.next` (run `next build` first). */
export function serverActions(root = process.cwd()): ServerActionRef[] {
  const manifest = JSON.parse(
    readFileSync(join(root, ".next", "server", "server-reference-manifest.json"), "utf8"),
  ) as { node: Record<string, ManifestEntry> };
  return Object.entries(manifest.node).map(([id, entry]) => {
    if (!entry.filename || !entry.exportedName)
      throw new Error(`The manifest does not name the export of action ${id}`);
    return {
      id,
      filename: entry.filename,
      exportedName: entry.exportedName,
      workers: Object.keys(entry.workers),
    };
  });
}

/** The action `exportedName` of `filename`; throws unless exactly one matches. */
export function findServerAction(
  actions: ServerActionRef[],
  filename: string,
  exportedName: string,
): ServerActionRef {
  const found = actions.filter((a) => a.filename === filename && a.exportedName === exportedName);
  if (found.length !== 1)
    throw new Error(`${found.length} server actions are ${filename}#${exportedName}`);
  return found[0]!;
}

/**
 * A URL path of a page that holds the action: its first worker with route groups dropped and each
 * `[param]` taken from `params` (`app/(reviewer)/queues/[queueId]/page` → `/queues/<id>`).
 */
export function actionPagePath(action: ServerActionRef, params: Record<string, string> = {}) {
  const worker = action.workers.find((w) => w.startsWith("app/") && w.endsWith("/page"));
  if (!worker) throw new Error(`No page holds ${action.exportedName}`);
  const segments = worker
    .slice("app/".length, -"/page".length)
    .split("/")
    .filter((s) => s !== "" && !/^\(.*\)$/.test(s))
    .map((s) => {
      const param = /^\[(.+)\]$/.exec(s)?.[1];
      if (param === undefined) return s;
      const value = params[param];
      if (value === undefined) throw new Error(`${worker} needs a value for [${param}]`);
      return encodeURIComponent(value);
    });
  return `/${segments.join("/")}`;
}

export type ActionAnswer<T = any> = {
  status: number;
  /** the action's return value (undefined when it did not run or threw) */
  result: T | undefined;
  /** what the server sent instead of a result (a digest: Next never sends an error's message) */
  thrown?: unknown;
  /** the Flight rows as sent, for debugging a failure */
  raw: string;
  headers: Headers;
};

/**
 * POSTs a call of `action` to `path` with JSON arguments. `headers` adds to or overrides the
 * browser's headers (a session `cookie`, another `origin`).
 */
export async function invokeServerAction<T = any>(
  baseUrl: string,
  action: ServerActionRef,
  path: string,
  args: unknown[],
  headers: Record<string, string> = {},
): Promise<ActionAnswer<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: {
      accept: "text/x-component",
      "content-type": "text/plain;charset=UTF-8",
      "next-action": action.id,
      origin: baseUrl,
      ...headers,
    },
    body: JSON.stringify(encodeReplyValue(args)),
    redirect: "manual",
  });
  const raw = await response.text();
  const answer: ActionAnswer<T> = {
    status: response.status,
    result: undefined,
    raw,
    headers: response.headers,
  };
  if (!response.headers.get("content-type")?.startsWith("text/x-component")) return answer;
  const rows = parseFlightRows(raw);
  // Row 0 is the action envelope, `{ a: "$@1", b: buildId, … }`: `a` points at the result.
  const envelope = rows.get("0");
  if (!envelope || typeof envelope !== "object" || !("a" in envelope)) return answer;
  try {
    answer.result = resolveFlight(envelope.a, rows) as T;
  } catch (error) {
    if (!(error instanceof FlightError)) throw error;
    answer.thrown = error.value;
  }
  return answer;
}

/** The action threw, or Next refused to run it: the row holds `{ digest }`, never the message. */
class FlightError extends Error {
  constructor(readonly value: unknown) {
    super(`The server action failed: ${JSON.stringify(value)}`);
  }
}

/** React's reply encoding of plain JSON: a string starting with `$` is escaped as `$$`. */
function encodeReplyValue(value: unknown): unknown {
  if (typeof value === "string") return value.startsWith("$") ? `$${value}` : value;
  if (Array.isArray(value)) return value.map(encodeReplyValue);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeReplyValue(v)]));
  return value;
}

/** `id:json` and `id:T<hex length>,text` rows of a Flight payload, by row id. */
function parseFlightRows(raw: string): Map<string, unknown> {
  const rows = new Map<string, unknown>();
  let at = 0;
  while (at < raw.length) {
    const colon = raw.indexOf(":", at);
    if (colon < 0) break;
    const id = raw.slice(at, colon);
    if (raw[colon + 1] === "T") {
      // A large string: its UTF-8 byte length in hex, a comma, then the text with no newline after.
      const comma = raw.indexOf(",", colon);
      const bytes = parseInt(raw.slice(colon + 2, comma), 16);
      const text = Buffer.from(raw.slice(comma + 1), "utf8")
        .subarray(0, bytes)
        .toString("utf8");
      rows.set(id, { $text: text });
      at = comma + 1 + text.length;
      continue;
    }
    const end = raw.indexOf("\n", colon);
    const line = raw.slice(colon + 1, end < 0 ? raw.length : end);
    at = end < 0 ? raw.length : end + 1;
    const tag = /^[A-Z]/.test(line) ? line[0] : "";
    const body = tag ? line.slice(1) : line;
    try {
      rows.set(id, tag ? { [`$${tag}`]: JSON.parse(body) } : JSON.parse(body));
    } catch {
      rows.set(id, { $unparsed: line });
    }
  }
  return rows;
}

/** Replaces Flight's `$` references in `value` with what they stand for. */
function resolveFlight(value: unknown, rows: Map<string, unknown>, depth = 0): unknown {
  if (depth > 64) throw new Error("Flight references nest too deep");
  if (typeof value === "string") {
    if (!value.startsWith("$")) return value;
    if (value.startsWith("$$")) return value.slice(1);
    if (value === "$undefined") return undefined;
    if (value === "$NaN") return NaN;
    if (value === "$Infinity") return Infinity;
    if (value === "$-Infinity") return -Infinity;
    if (value === "$-0") return -0;
    if (value.startsWith("$D")) return new Date(value.slice(2));
    if (value.startsWith("$n")) return BigInt(value.slice(2));
    // `$1`, `$@1` (a promise of row 1), `$1:key:key` (a path into row 1)
    const ref = /^\$@?([0-9a-f]+)((?::[^:]+)*)$/.exec(value);
    if (!ref) throw new Error(`Unsupported Flight reference ${value}`);
    let target = rows.get(ref[1]!);
    if (target === undefined) throw new Error(`Flight row ${ref[1]} is missing`);
    if (target && typeof target === "object" && "$text" in target)
      target = (target as { $text: string }).$text;
    else if (target && typeof target === "object" && "$E" in target)
      throw new FlightError((target as { $E: unknown }).$E);
    target = resolveFlight(target, rows, depth + 1);
    for (const key of ref[2] ? ref[2].slice(1).split(":") : [])
      target = (target as Record<string, unknown>)[key];
    return target;
  }
  if (Array.isArray(value)) return value.map((v) => resolveFlight(v, rows, depth + 1));
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, resolveFlight(v, rows, depth + 1)]),
    );
  return value;
}
