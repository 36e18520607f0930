import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { uuidv7 } from "uuidv7";
import { z } from "zod";

/**
 * An id a caller names (a server action's argument, a filter, a Slack button's value): opaque,
 * non-empty and bounded, so a megabyte "id" is refused before any query. One schema for all of them.
 */
export const Id = z.string().min(1).max(200);

/** A new sortable id (UUIDv7): ids created later sort later. */
export function newId(): string {
  return uuidv7();
}

/** A random secret with a recognizable prefix, e.g. `cs_agent_…`. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/**
 * Whether `secret` hashes to `storedHash`, compared in constant time. Secrets are looked up by
 * their hash, never compared as typed; this keeps even the hash comparison free of timing.
 */
export function matchesHash(secret: string, storedHash: string | null): boolean {
  if (storedHash === null) return false;
  const given = Buffer.from(sha256Hex(secret), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export function isoTime(ms: number): string;
export function isoTime(ms: number | null | undefined): string | null;
export function isoTime(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
