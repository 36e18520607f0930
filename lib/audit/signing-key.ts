import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from "node:crypto";
import { eq } from "drizzle-orm";
import { databaseUrl, getDb } from "@/db/client";
import { appSettings } from "@/db/schema";
import { statement, writeBatch } from "@/db/write-batch";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { openSecret, sealSecret, SECRET_PLACES } from "@/lib/auth/sealed-secrets";

// The Ed25519 key that signs the head of the hash chain in every history and audit export
// (lib/audit/signed-export.ts), so a file can be checked without the database. Generated at the
// first start and kept in app_settings like the session secret: sealed with
// COUNTERSIGN_SECRET_KEY when one is set (lib/auth/sealed-secrets.ts, and resealed at start by
// lib/seal-stored-secrets.ts). Its public half is served at GET /api/v1/audit/public-key.

export const AUDIT_KEY_SETTING = "audit_signing_key";

export type AuditSigningKey = {
  privateKey: KeyObject;
  /** the raw 32-byte public key, base64 */
  publicKey: string;
  /** the first 16 hex digits of the public key's SHA-256: a short name to compare */
  keyId: string;
};

let cached: { url: string; key: Promise<AuditSigningKey> } | undefined;

/** The signing key, generated and stored on first use (every instance then reads the same one). */
export function auditSigningKey(): Promise<AuditSigningKey> {
  const url = databaseUrl();
  if (cached?.url !== url) {
    const key = loadOrCreate();
    cached = { url, key };
    key.catch(() => (cached = undefined));
  }
  return cached.key;
}

async function loadOrCreate(): Promise<AuditSigningKey> {
  const read = async () =>
    (
      await getDb()
        .select({ value: appSettings.value })
        .from(appSettings)
        .where(eq(appSettings.key, AUDIT_KEY_SETTING))
    )[0]?.value;
  let stored = await read();
  if (!stored) {
    const { privateKey } = generateKeyPairSync("ed25519");
    const pkcs8 = privateKey.export({ format: "der", type: "pkcs8" }).toString("base64");
    // Instances starting together: the first insert wins, and everyone reads the winner's key.
    await writeBatch([
      statement(
        "insert into app_settings (key, value, created_at) values (?, ?, ?) on conflict do nothing",
        AUDIT_KEY_SETTING,
        sealSecret(pkcs8, SECRET_PLACES.auditSigningKey),
        Date.now(),
      ),
    ]);
    stored = (await read())!;
  }
  const der = Buffer.from(openSecret(stored, SECRET_PLACES.auditSigningKey), "base64");
  const privateKey = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  return describeKey(privateKey);
}

function describeKey(privateKey: KeyObject): AuditSigningKey {
  const raw = rawPublicKey(createPublicKey(privateKey));
  return { privateKey, publicKey: raw.toString("base64"), keyId: keyIdOf(raw) };
}

/** The raw 32 bytes of an Ed25519 public key (its SPKI DER ends with them). */
function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: "der", type: "spki" }).subarray(-32);
}

export const keyIdOf = (raw: Buffer) => createHash("sha256").update(raw).digest("hex").slice(0, 16);

/** A public key from its raw base64 form (as served and as written in exports). */
export function publicKeyFromBase64(base64: string): KeyObject {
  const raw = Buffer.from(base64.trim(), "base64");
  if (raw.length !== 32) throw new Error("An Ed25519 public key is 32 bytes (base64).");
  const spkiPrefix = Buffer.from("302a300506032b6570032100", "hex");
  return createPublicKey({ key: Buffer.concat([spkiPrefix, raw]), format: "der", type: "spki" });
}

export function signWith(key: AuditSigningKey, message: string): string {
  return sign(null, Buffer.from(message, "utf8"), key.privateKey).toString("base64");
}

/** GET /api/v1/audit/public-key: what verifies the signatures of exports (anyone who can export). */
export async function auditPublicKey(actor: Actor): Promise<{
  algorithm: "Ed25519";
  publicKey: string;
  keyId: string;
}> {
  requireReviewer(actor);
  const key = await auditSigningKey();
  return { algorithm: "Ed25519", publicKey: key.publicKey, keyId: key.keyId };
}
