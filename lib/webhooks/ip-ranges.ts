import { isIPv4, isIPv6 } from "node:net";

// IP addresses as bytes, and the ranges a webhook must never be sent to (issue 14, finding 2):
// what would let an agent key reach the server's own loopback services, the private network
// behind it, or a cloud metadata endpoint (169.254.169.254).

export type Range = { bytes: Uint8Array; bits: number };

/** An address (dotted IPv4 or IPv6, brackets and zone id allowed) as 4 or 16 bytes, or null. */
export function addressBytes(text: string): Uint8Array | null {
  const address = text.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (isIPv4(address)) return Uint8Array.from(address.split(".").map(Number));
  if (!isIPv6(address)) return null;
  // An IPv6 address may end in a dotted IPv4 (::ffff:1.2.3.4): turn that into two groups.
  const v4Tail = address.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  const hex = v4Tail
    ? `${v4Tail[1]}${hexGroups(Uint8Array.from(v4Tail[2]!.split(".").map(Number)))}`
    : address;
  const [head, tail] = hex.split("::") as [string, string | undefined];
  const groupsOf = (part: string | undefined) => (part ? part.split(":") : []);
  const left = groupsOf(head);
  const right = groupsOf(tail);
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}

function hexGroups(v4: Uint8Array): string {
  return `${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
}

/** A CIDR range (`10.0.0.0/8`, `fc00::/7`; a bare address is a range of one), or null. */
export function parseRange(text: string): Range | null {
  const [address, bitsText, extra] = text.split("/");
  if (extra !== undefined || address === undefined) return null;
  const bytes = addressBytes(address);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (bitsText === undefined) return { bytes, bits: max };
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return null;
  return { bytes, bits: Number(bitsText) };
}

export function inRange(bytes: Uint8Array, range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  for (let bit = 0; bit < range.bits; bit += 8) {
    const left = Math.min(8, range.bits - bit);
    const mask = (0xff << (8 - left)) & 0xff;
    if ((bytes[bit / 8]! & mask) !== (range.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

const ranges = (list: [string, string][]) =>
  list.map(([cidr, name]) => ({ range: parseRange(cidr)!, name }));

const FORBIDDEN_V4 = ranges([
  ["0.0.0.0/8", "unspecified (this network)"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared address space (CGNAT)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local (cloud metadata)"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved (IETF protocol assignments)"],
  ["192.0.2.0/24", "reserved (documentation)"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved (benchmarking)"],
  ["198.51.100.0/24", "reserved (documentation)"],
  ["203.0.113.0/24", "reserved (documentation)"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["240.0.0.0/4", "reserved"],
]);

const FORBIDDEN_V6 = ranges([
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::/96", "reserved (IPv4-compatible)"],
  ["64:ff9b:1::/48", "reserved (local NAT64)"],
  ["100::/64", "reserved (discard)"],
  ["2001::/32", "reserved (Teredo)"],
  ["2001:db8::/32", "reserved (documentation)"],
  ["fc00::/7", "unique-local (private)"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "reserved (site-local)"],
  ["ff00::/8", "multicast"],
]);

/** IPv6 ranges that carry an IPv4 address, and where: that address is checked as IPv4. */
const EMBEDDING_V4 = [
  { range: parseRange("::ffff:0:0/96")!, at: 12 }, // IPv4-mapped
  { range: parseRange("64:ff9b::/96")!, at: 12 }, // NAT64
  { range: parseRange("2002::/16")!, at: 2 }, // 6to4
];

/**
 * Why a webhook may not go to this address ("loopback", "private" …), or null when it may.
 * An IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by that address.
 */
export function forbiddenAddress(text: string): string | null {
  const bytes = addressBytes(text);
  if (!bytes) return "not an IP address";
  if (bytes.length === 4) return FORBIDDEN_V4.find((r) => inRange(bytes, r.range))?.name ?? null;
  for (const { range, at } of EMBEDDING_V4) {
    if (inRange(bytes, range)) return forbiddenAddress(bytes.slice(at, at + 4).join("."));
  }
  return FORBIDDEN_V6.find((r) => inRange(bytes, r.range))?.name ?? null;
}
