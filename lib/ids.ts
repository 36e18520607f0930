import { createHash, randomBytes } from "node:crypto";
import { uuidv7 } from "uuidv7";

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

export function isoTime(ms: number): string;
export function isoTime(ms: number | null | undefined): string | null;
export function isoTime(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
