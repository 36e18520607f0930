import { lookup as dnsLookup } from "node:dns/promises";
import { isIPv4 } from "node:net";
import { InvalidRequestError } from "@/lib/errors";
import { addressBytes, forbiddenAddress, inRange, parseRange, type Range } from "./ip-ranges";
import { setting } from "@/lib/config/settings";

// Where a callbackUrl may point (issue 14, finding 2). An agent key chooses the URL and the
// server POSTs to it, so without this check any agent could make the server reach its own
// loopback services, the private network behind it, or a cloud metadata endpoint. The URL is
// checked when the batch is created (a clear 400, nothing written) and again at every send,
// after resolving its name, and the send connects to the address that was checked
// (lib/webhooks/post-webhook.ts), so DNS cannot rebind the name in between.
//
// The operator's allow-list, CALLBACK_ALLOWED_HOSTS, lets chosen targets through: names
// (`localhost`, `hooks.internal`), addresses or CIDR ranges (`127.0.0.1`, `10.1.0.0/16`,
// `[::1]`), each optionally with a port (`localhost:4000`, `[::1]:8080`; not on ranges).

export type AllowEntry =
  { name: string; port: number | null } | { range: Range; port: number | null };
export type AllowList = AllowEntry[];

export { forbiddenAddress };

const ENV = "CALLBACK_ALLOWED_HOSTS";

/** Reads an allow-list; an entry it cannot read is an error, never silently dropped. */
export function parseAllowList(text: string | undefined, variable: string = ENV): AllowList {
  return (text ?? "")
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      const parsed = parseEntry(entry);
      if (!parsed)
        throw new Error(
          `${variable}: cannot read "${entry}" (expected a host name, an IP address or a CIDR range, optionally with :port)`,
        );
      return parsed;
    });
}

function parseEntry(entry: string): AllowEntry | null {
  if (entry.includes("/")) {
    const range = parseRange(entry);
    return range && { range, port: null };
  }
  const bracketed = entry.match(/^\[([^\]]+)\](?::(\d{1,5}))?$/);
  if (bracketed) {
    const range = parseRange(bracketed[1]!);
    return range && { range, port: portOf(bracketed[2]) };
  }
  if (entry.includes(":") && addressBytes(entry)) return { range: parseRange(entry)!, port: null };
  const hostAndPort = entry.match(/^([a-z0-9.-]+)(?::(\d{1,5}))?$/i);
  if (!hostAndPort) return null;
  const [, host, port] = hostAndPort as [string, string, string | undefined];
  if (isIPv4(host)) return { range: parseRange(host)!, port: portOf(port) };
  return { name: canonicalName(host), port: portOf(port) };
}

const portOf = (text: string | undefined) => (text === undefined ? null : Number(text));

const canonicalName = (host: string) => host.toLowerCase().replace(/\.$/, "");

let cached: { text: string | undefined; list: AllowList } | undefined;

/** The allow-list from the environment (read again when the variable changes, as tests do). */
export function configuredAllowList(): AllowList {
  const text = setting("CALLBACK_ALLOWED_HOSTS");
  if (!cached || cached.text !== text) cached = { text, list: parseAllowList(text) };
  return cached.list;
}

let plainHttpCached: { text: string | undefined; list: AllowList } | undefined;

/**
 * MCP_GATEWAY_PLAIN_HTTP_HOSTS, read as CALLBACK_ALLOWED_HOSTS is: the hosts a hosted MCP
 * gateway may send its credential headers to over plain http besides loopback
 * (lib/mcp-gateways/upstream-target.ts).
 */
export function configuredPlainHttpHosts(): AllowList {
  const text = setting("MCP_GATEWAY_PLAIN_HTTP_HOSTS");
  if (!plainHttpCached || plainHttpCached.text !== text)
    plainHttpCached = { text, list: parseAllowList(text, "MCP_GATEWAY_PLAIN_HTTP_HOSTS") };
  return plainHttpCached.list;
}

/** Whether the allow-list names this host (a name, or an address in one of its ranges) and port. */
export function allowListHas(allow: AllowList, host: string, port: number): boolean {
  const name = canonicalName(host.replace(/^\[(.*)\]$/, "$1"));
  return allowsName(allow, name, port) || allowsAddress(allow, name, port);
}

const portMatches = (entry: AllowEntry, port: number) => entry.port === null || entry.port === port;

function allowsName(allow: AllowList, name: string, port: number): boolean {
  return allow.some((e) => "name" in e && e.name === name && portMatches(e, port));
}

function allowsAddress(allow: AllowList, address: string, port: number): boolean {
  const bytes = addressBytes(address);
  return (
    bytes !== null &&
    allow.some((e) => "range" in e && inRange(bytes, e.range) && portMatches(e, port))
  );
}

/**
 * The host exactly as written in the URL (lowercased, without credentials and port). WHATWG URL
 * parsing turns `2130706433`, `0x7f.1`, `127.1` and `017700000001` into `127.0.0.1`; comparing
 * with what was written is how those spellings are caught.
 */
function writtenHost(raw: string): string {
  const compact = raw.replace(/[\t\n\r]/g, "").trim();
  const authority = compact.match(/^[a-z][a-z0-9+.-]*:[/\\]*([^/?#\\]*)/i)?.[1] ?? "";
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return (host.startsWith("[") ? host.replace(/\].*$/, "]") : host.replace(/:[^:]*$/, ""))
    .toLowerCase()
    .replace(/\.$/, "");
}

type Parsed = { url: URL; name: string; port: number; address: string | null };

function parseTarget(raw: string): Parsed | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL";
  if (url.username || url.password)
    return "must not carry credentials (user:password@): receivers check the webhook's signature";
  const name = canonicalName(url.hostname.replace(/^\[(.*)\]$/, "$1"));
  if (isIPv4(name) && writtenHost(raw) !== name)
    return `numeric shorthand for ${name} is refused: write the address as four decimal numbers`;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { url, name, port, address: addressBytes(name) ? name : null };
}

/**
 * Why a callbackUrl is refused, or null when it may be used, judged from the URL alone: its
 * scheme, credentials, an IP address written in it, `localhost`. Names are resolved later
 * (`checkCallbackTargetResolves`, `resolveCallbackTarget`).
 */
export function callbackUrlProblem(raw: string, allow = configuredAllowList()): string | null {
  const target = parseTarget(raw);
  if (typeof target === "string") return target;
  const { name, port, address } = target;
  if (allowsName(allow, name, port)) return null;
  if (address) {
    if (allowsAddress(allow, address, port)) return null;
    const reason = forbiddenAddress(address);
    return reason && refusal(`${address} is a ${reason} address`);
  }
  // RFC 6761: these names are loopback wherever they are resolved.
  if (name === "localhost" || name.endsWith(".localhost"))
    return refusal(`${name} is a loopback address`);
  return null;
}

const refusal = (what: string) =>
  `refused: ${what}; webhooks go only to public addresses unless the operator allows the target in ${ENV}`;

export type ResolvedAddress = { address: string; family: number };
export type Lookup = (name: string) => Promise<ResolvedAddress[]>;

const systemLookup: Lookup = (name) => dnsLookup(name, { all: true, verbatim: true });

/**
 * A target that passed the check: connect to `address` (or, where the connection may try several,
 * to one of `addresses`, every one checked), and to nothing else.
 */
export type CheckedTarget = {
  ok: true;
  url: URL;
  address: string;
  family: 4 | 6;
  addresses: { address: string; family: 4 | 6 }[];
};

export type CallbackTarget = CheckedTarget | { ok: false; reason: string; permanent: boolean };

/**
 * The address to send a webhook to, checked: the URL as `callbackUrlProblem` judges it, then
 * every address its name resolves to (one forbidden address refuses them all: a rebinding name
 * can answer a public address first and a private one next). `permanent` refusals will never
 * succeed; a name that does not resolve may later.
 */
export async function resolveCallbackTarget(
  raw: string,
  options: { allow?: AllowList; lookup?: Lookup } = {},
): Promise<CallbackTarget> {
  const allow = options.allow ?? configuredAllowList();
  const problem = callbackUrlProblem(raw, allow);
  if (problem) return { ok: false, reason: problem, permanent: true };
  const { url, name, port, address } = parseTarget(raw) as Parsed;
  if (address) {
    const literal = { address, family: address.includes(":") ? (6 as const) : (4 as const) };
    return { ok: true, url, ...literal, addresses: [literal] };
  }

  let addresses: ResolvedAddress[];
  try {
    addresses = await (options.lookup ?? systemLookup)(name);
  } catch (error) {
    const reason = `cannot resolve ${name}: ${error instanceof Error ? error.message : error}`;
    return { ok: false, reason, permanent: false };
  }
  if (addresses.length === 0)
    return { ok: false, reason: `${name} has no address`, permanent: false };
  if (!allowsName(allow, name, port)) {
    for (const { address } of addresses) {
      if (allowsAddress(allow, address, port)) continue;
      const reason = forbiddenAddress(address);
      if (reason)
        return {
          ok: false,
          reason: refusal(`${name} resolves to ${address}, a ${reason} address`),
          permanent: true,
        };
    }
  }
  const checked = addresses.map((a) => ({
    address: a.address,
    family: a.family === 6 ? (6 as const) : (4 as const),
  }));
  return { ok: true, url, ...checked[0]!, addresses: checked };
}

/** How long batch creation waits for DNS before leaving the name to the send-time check. */
const CREATE_LOOKUP_MS = 2000;

/**
 * At batch creation: refuses (400, nothing written) a callbackUrl whose name resolves to an
 * address webhooks may not go to. A name that does not resolve (yet) is accepted: the check at
 * every send still applies, and DNS being down must not stop agents from pausing.
 */
export async function checkCallbackTargetResolves(
  raw: string | undefined,
  path: string,
): Promise<void> {
  if (raw === undefined) return;
  const lookup: Lookup = (name) =>
    Promise.race([
      systemLookup(name),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("DNS timed out")), CREATE_LOOKUP_MS).unref(),
      ),
    ]);
  const target = await resolveCallbackTarget(raw, { lookup });
  if (!target.ok && target.permanent) {
    throw new InvalidRequestError(`Invalid request: ${path}: ${target.reason}`, [
      { path, message: target.reason },
    ]);
  }
}
