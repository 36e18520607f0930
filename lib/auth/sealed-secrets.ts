import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { setting } from "@/lib/config/settings";

// Secrets the server must read back — the webhook signing secrets (agent_keys.webhook_secret)
// and the session-signing secret (app_settings auth_secret) — cannot be stored as hashes like
// keys and tokens. With COUNTERSIGN_SECRET_KEY set they are stored encrypted (AES-256-GCM), so a
// copy of the database (a backup, a leaked file) does not hand out the power to forge webhooks
// or session cookies. Stored values carry a version prefix:
//
//   enc:v1:<key id>:<iv>:<ciphertext and tag>   (base64url; the key id names which key sealed it)
//
// and anything else is a value stored in plain text before a key was configured: it keeps
// working and is sealed at the next start with a key (sealStoredSecrets). Each value is bound to
// where it is stored (the GCM associated data), so a sealed value copied into another row does
// not open there. Without a key, values are stored and read in plain text, as before.

const PREFIX = "enc:v1:";
const KEY_ENV = "COUNTERSIGN_SECRET_KEY" as const;
/** Older keys, comma-separated, still read (for rotation): rows they sealed are sealed again. */
const PREVIOUS_KEYS_ENV = "COUNTERSIGN_OLD_SECRET_KEYS" as const;

export type SecretKey = { id: string; bytes: Buffer };

/** A 32-byte key written as base64 (`openssl rand -base64 32`) or 64 hex digits. */
export function parseSecretKey(text: string, name: string = KEY_ENV): SecretKey {
  const trimmed = text.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : Buffer.from(trimmed, "base64");
  if (bytes.length !== 32)
    throw new Error(
      `${name} must be 32 random bytes, as base64 (openssl rand -base64 32) or 64 hex digits`,
    );
  return { id: createHash("sha256").update(bytes).digest("hex").slice(0, 8), bytes };
}

let cached: { text: string; keys: SecretKey[] } | undefined;

/** The configured keys, the one that seals first; empty when no key is configured. */
export function configuredSecretKeys(): SecretKey[] {
  const current = setting(KEY_ENV) ?? "";
  const previous = setting(PREVIOUS_KEYS_ENV) ?? "";
  const text = `${current}|${previous}`;
  if (cached?.text !== text) {
    const keys = current ? [parseSecretKey(current)] : [];
    for (const old of previous.split(",").filter((k) => k.trim()))
      keys.push(parseSecretKey(old, PREVIOUS_KEYS_ENV));
    cached = { text, keys };
  }
  return cached.keys;
}

export const isSealed = (stored: string) => stored.startsWith(PREFIX);

/** Whether `stored` is already sealed with the key that seals now (nothing to redo). */
export function isSealedWith(stored: string, key: SecretKey | undefined): boolean {
  return key !== undefined && stored.startsWith(`${PREFIX}${key.id}:`);
}

/**
 * The value to store for `secret` at `place` (e.g. `agent_keys.webhook_secret:<id>`): sealed
 * with the current key, or the secret itself when no key is configured.
 */
export function sealSecret(secret: string, place: string, keys = configuredSecretKeys()): string {
  const key = keys[0];
  if (!key) return secret;
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key.bytes, iv);
  cipher.setAAD(Buffer.from(place));
  const sealed = Buffer.concat([
    cipher.update(secret, "utf8"),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  return `${PREFIX}${key.id}:${iv.toString("base64url")}:${sealed.toString("base64url")}`;
}

/** The secret a stored value holds (a plain value is its own secret). */
export function openSecret(stored: string, place: string, keys = configuredSecretKeys()): string {
  if (!isSealed(stored)) return stored;
  const [keyId, iv, sealed] = stored.slice(PREFIX.length).split(":");
  const key = keys.find((k) => k.id === keyId);
  if (!key)
    throw new Error(
      `${place} is encrypted with key ${keyId}, which is not configured: set ${KEY_ENV} (or ${PREVIOUS_KEYS_ENV}) to that key`,
    );
  const bytes = Buffer.from(sealed ?? "", "base64url");
  const decipher = createDecipheriv("aes-256-gcm", key.bytes, Buffer.from(iv ?? "", "base64url"));
  decipher.setAAD(Buffer.from(place));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  try {
    return Buffer.concat([
      decipher.update(bytes.subarray(0, bytes.length - 16)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    throw new Error(`${place} does not open with key ${keyId}: the stored value was altered`);
  }
}

/** Where each sealed secret lives: the associated data that binds a sealed value to its row. */
export const SECRET_PLACES = {
  webhookSecret: (agentKeyId: string) => `agent_keys.webhook_secret:${agentKeyId}`,
  authSecret: "app_settings.auth_secret",
  auditSigningKey: "app_settings.audit_signing_key",
  /** a hosted MCP gateway's upstream headers, as one JSON value */
  mcpGatewayHeaders: (gatewayId: string) => `mcp_gateways.headers:${gatewayId}`,
} as const;
