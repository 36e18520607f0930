import { createHash, type Hash } from "node:crypto";
import { readChainHead, type ChainHead } from "./chain-head";
import { auditSigningKey, signWith } from "./signing-key";

// The last line (CSV) or field (JSON) of a history or audit export: the event log's chain head at
// the time of the export, and an Ed25519 signature (lib/audit/signing-key.ts) over it and over the
// SHA-256 of every byte of the file before it. `npm run admin -- audit verify-export FILE`
// (lib/audit/verify-export.ts) checks it without the database: a changed, added or removed byte
// of the file, or a head the server did not sign, fails.
//
//   CSV:  #chain-head,<seq>,<hash>,<signedAt>,<body sha256>,<public key>,<signature>
//   JSON: {"<rows>":[…],"chainHead":{"seq":…,"hash":…,"signedAt":…,"bodySha256":…,
//          "publicKey":…,"signature":…}}

export const CSV_HEAD_MARK = "#chain-head";
/** What precedes the signed field of a JSON export: the body ends just before it. */
export const JSON_HEAD_MARK = ',"chainHead":';

export type SignedHead = ChainHead & {
  signedAt: string;
  bodySha256: string;
  /** raw Ed25519 public key, base64 */
  publicKey: string;
  signature: string;
};

/** The exact text the signature covers. */
export const signedMessage = (
  kind: string,
  head: { seq: number; hash: string; signedAt: string; bodySha256: string },
) =>
  ["countersign-export-v1", kind, String(head.seq), head.hash, head.signedAt, head.bodySha256].join(
    "\n",
  );

/** Counts the body's bytes as they are sent, and signs the head at the end. */
export class ExportSigner {
  private readonly digest: Hash = createHash("sha256");
  constructor(private readonly kind: "history" | "audit") {}

  /** Encodes a chunk of the body and adds it to what is signed. */
  body(text: string): Uint8Array {
    const bytes = Buffer.from(text, "utf8");
    this.digest.update(bytes);
    return bytes;
  }

  /** The signed head, read now (or the one given, for an export bounded by a head read first). */
  async head(at?: ChainHead): Promise<SignedHead> {
    const [key, chain] = await Promise.all([auditSigningKey(), at ?? readChainHead()]);
    const unsigned = {
      ...chain,
      signedAt: new Date().toISOString(),
      bodySha256: this.digest.digest("hex"),
    };
    return {
      ...unsigned,
      publicKey: key.publicKey,
      signature: signWith(key, signedMessage(this.kind, unsigned)),
    };
  }
}

export const csvHeadLine = (head: SignedHead) =>
  `${[CSV_HEAD_MARK, head.seq, head.hash, head.signedAt, head.bodySha256, head.publicKey, head.signature].join(",")}\r\n`;

export const jsonHeadField = (head: SignedHead) => `${JSON_HEAD_MARK}${JSON.stringify(head)}}\n`;
