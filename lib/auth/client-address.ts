import { BlockList, isIP } from "node:net";
import type { IncomingMessage } from "node:http";
import { setting as readSetting } from "@/lib/config/settings";

// Who is on the other end of a request, for the rate limits (bearer-failures.ts and better-auth's
// sign-in limit): here in lib/auth with them, below lib/http, whose server stamps it.
// X-Forwarded-For is written by whoever sends the request, so it is believed only as far as
// TRUSTED_PROXIES says: the address is the socket's, unless the socket is a trusted proxy; then
// X-Forwarded-For is walked from the right (the entry that proxy appended) past further trusted
// proxies, and the first address that is not one is the client.
//
// The production server (lib/http/server.ts) works this out for every request from the socket it
// accepted and writes it into CLIENT_ADDRESS_HEADER, replacing whatever the client sent under that
// name, before the API, the streams or Next.js see the request: route handlers read only that
// header. `next dev` does not run that server and route handlers never see the socket there, so
// the address falls back to X-Forwarded-For's last entry (which Next.js fills with the socket's
// address when the client sent none, but a client can write it): rate limits under `next dev`
// are not a defence.

/** Written by lib/http/server.ts only; a client's own value is dropped. */
export const CLIENT_ADDRESS_HEADER = "x-countersign-client-address";

const MAX_ADDRESS_LENGTH = 64;

const globalMarks = globalThis as unknown as { __countersignStampsClientAddress?: boolean };

/** Called by lib/http/server.ts: every request of this process carries the server's address header. */
export function markClientAddressesStamped(): void {
  globalMarks.__countersignStampsClientAddress = true;
}

/** `TRUSTED_PROXIES`: comma-separated addresses and CIDR ranges (`10.0.0.0/8, ::1`). Throws on a bad entry. */
export function parseTrustedProxies(setting = readSetting("TRUSTED_PROXIES") ?? ""): BlockList {
  const list = new BlockList();
  for (const entry of setting.split(",").map((e) => e.trim())) {
    if (!entry) continue;
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const length = prefix === undefined ? bits : Number(prefix);
    if (!family || extra !== undefined || !/^\d+$/.test(prefix ?? "32") || !(length <= bits)) {
      throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range.`);
    }
    list.addSubnet(address, length, family === 4 ? "ipv4" : "ipv6");
  }
  return list;
}

let trusted: { setting: string; list: BlockList } | undefined;

function trustedProxies(): BlockList {
  const setting = readSetting("TRUSTED_PROXIES") ?? "";
  if (trusted?.setting !== setting) trusted = { setting, list: parseTrustedProxies(setting) };
  return trusted.list;
}

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) is 192.0.2.1. */
function plain(address: string): string {
  const lower = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped ? mapped[1]! : lower;
}

function isTrusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** The client behind `socketAddress`, believing `forwardedFor` only as far as `proxies` allow. */
export function resolveClientAddress(
  socketAddress: string,
  forwardedFor: string | undefined,
  proxies?: BlockList,
): string {
  let client = plain(socketAddress);
  // Without X-Forwarded-For there is nothing to believe: no proxy list read, no lookup in it (on
  // every request, about 0.5% of the server's CPU per write).
  if (!forwardedFor) return client;
  proxies ??= trustedProxies();
  if (!isTrusted(proxies, client)) return client;
  const hops = forwardedFor.split(",").map(plain).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    // A trusted proxy appends a valid address; anything else is not a hop to believe or walk past.
    if (!isIP(hops[i]!)) break;
    client = hops[i]!;
    if (!isTrusted(proxies, client)) break;
  }
  return client;
}

/**
 * Sets CLIENT_ADDRESS_HEADER on a request the production server accepted (dropping a client's
 * own), before anything reads the request.
 */
export function stampClientAddress(request: IncomingMessage): void {
  const forwarded = request.headers["x-forwarded-for"];
  const address = resolveClientAddress(
    request.socket.remoteAddress ?? "unknown",
    Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
  );
  request.headers[CLIENT_ADDRESS_HEADER] = address;
}

/** The client's address as the server stamped it (see the top of this file for `next dev`). */
export function clientAddress(headers: Headers): string {
  const stamped = globalMarks.__countersignStampsClientAddress
    ? headers.get(CLIENT_ADDRESS_HEADER)
    : null;
  let address = stamped;
  if (address === null) {
    const forwarded = headers.get("x-forwarded-for") ?? "";
    address = forwarded.slice(forwarded.lastIndexOf(",") + 1);
  }
  return plain(address).slice(0, MAX_ADDRESS_LENGTH) || "unknown";
}

/**
 * The key a rate limit counts under: the address, or for IPv6 its /64 (one host is usually given
 * a whole /64, so counting single addresses would let it rotate through 2^64 of them).
 */
export function rateLimitSubject(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.padStart(4, "0"))
    .join(":")}::/64`;
}
