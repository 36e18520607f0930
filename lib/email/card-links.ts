import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { getDb } from "@/db/client";
import { cardLinkUses } from "@/db/schema";
import { changedRow, insertRows, StateMoved } from "@/db/write-batch";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { actorRef, type ReviewerActor } from "@/lib/auth/actor";
import { authSecret } from "@/lib/auth/better-auth";
import { NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { setting } from "@/lib/config/settings";

// The link to a card in an email: signed (HMAC-SHA256 with a key derived from the server's
// secret), for one person, expiring, and good for one use. It grants nothing by itself: opening
// it leads to sign-in when there is no session, and then to the card, where the reviewer decides.
// A mail scanner that follows it meets the sign-in page and uses nothing up; only the person it
// was sent to, signed in, uses it. Nothing here ever decides a card.
//
// The link carries what it is for (`payload.signature`), so checking it needs no stored row; the
// database only records uses (card_link_uses), which is what makes it single-use.

export const CARD_LINK_PATH = "/card-link";

/** How long a link works: long enough for a digest read the next morning. */
export function cardLinkLifetimeMs(): number {
  return setting("CARD_LINK_TTL_SECS") * 1000;
}

const Payload = z.object({
  /** the link's id: what a use records */
  l: z.string().min(1).max(100),
  /** the person it was sent to */
  u: z.string().min(1).max(200),
  /** the batch (card) */
  b: z.string().min(1).max(200),
  /** expires at (ms) */
  e: z.int(),
});
type Payload = z.infer<typeof Payload>;

let key: Promise<Buffer> | undefined;
/** A key of its own, so a card link's signature can never stand for anything else's. */
function signingKey(): Promise<Buffer> {
  key ??= authSecret().then((secret) =>
    createHmac("sha256", secret).update("countersign card links v1").digest(),
  );
  return key;
}

async function sign(part: string): Promise<Buffer> {
  return createHmac("sha256", await signingKey())
    .update(part)
    .digest();
}

/** A new link to `batchId` for `userId`; every call makes a different one. */
export async function cardLinkUrl(
  userId: string,
  batchId: string,
  now = Date.now(),
  lifetimeMs = cardLinkLifetimeMs(),
): Promise<string> {
  const payload: Payload = { l: newId(), u: userId, b: batchId, e: now + lifetimeMs };
  const part = Buffer.from(JSON.stringify(payload)).toString("base64url");
  const token = `${part}.${(await sign(part)).toString("base64url")}`;
  return `${publicBaseUrl()}${CARD_LINK_PATH}/${token}`;
}

export type CardLinkCheck =
  { ok: true; link: Payload } | { ok: false; reason: "invalid" | "expired" };

/** The link's signature and expiry, checked without the database. */
export async function checkCardLink(token: string, now = Date.now()): Promise<CardLinkCheck> {
  const [part, signature, extra] = token.split(".");
  if (!part || !signature || extra !== undefined || token.length > 1000)
    return { ok: false, reason: "invalid" };
  const expected = await sign(part);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: "invalid" };
  let payload: Payload;
  try {
    payload = Payload.parse(JSON.parse(Buffer.from(part, "base64url").toString("utf8")));
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (payload.e <= now) return { ok: false, reason: "expired" };
  return { ok: true, link: payload };
}

export type CardLinkOutcome =
  | { kind: "open"; batchId: string }
  | { kind: "sign_in" }
  | { kind: "invalid" }
  | { kind: "expired" }
  | { kind: "someone_else" }
  | { kind: "used" }
  | { kind: "not_visible" };

/**
 * What opening a link leads to, for `viewer` (null: signed out). Only the open outcome uses the
 * link up: one conditional insert, so two tabs opening it at once get one card and one refusal.
 * Visibility is checked before: someone who left the queue keeps an unused link that still refuses.
 * The use and its event are one write batch.
 */
export async function openCardLink(
  token: string,
  viewer: ReviewerActor | null,
  now = Date.now(),
): Promise<CardLinkOutcome> {
  const checked = await checkCardLink(token, now);
  if (!checked.ok) return { kind: checked.reason };
  if (!viewer) return { kind: "sign_in" };
  const { link } = checked;
  if (viewer.id !== link.u) return { kind: "someone_else" };
  try {
    await findBatchForReviewer(getDb(), viewer, link.b);
  } catch (error) {
    if (error instanceof NotFoundError) return { kind: "not_visible" };
    throw error;
  }
  try {
    await commit([
      insertRows(
        cardLinkUses,
        [{ linkId: link.l, userId: link.u, batchId: link.b, usedAt: now }],
        " on conflict (link_id) do nothing",
      ),
      changedRow(), // used before: nothing is written, the visitor is told so
      // The use, in the log (no run and no queue: neither the agent's run stream nor the queue's
      // reviewers are told who opened which email).
      eventRows({
        type: "card_link.opened",
        batchId: link.b,
        queueId: null,
        actor: actorRef(viewer),
        data: { linkId: link.l },
        at: now,
      }),
    ]);
  } catch (error) {
    if (error instanceof StateMoved) return { kind: "used" };
    throw error;
  }
  return { kind: "open", batchId: link.b };
}
