import { and, eq, gt, isNull, or, sql } from "drizzle-orm";
import {
  agentKeyQueues,
  agentKeys,
  queueMembers,
  reviewerTokens,
  users,
  type AgentMode,
} from "@/db/schema";
import type { Executor } from "@/db/client";
import { sha256Hex } from "@/lib/ids";
import { cachedActor, cacheGeneration, rememberActor } from "./actor-cache";
import { sessionUser } from "./better-auth";
import { clientAddress } from "./client-address";
import { assertNotLimited, recordFailure } from "./bearer-failures";
import type { Credential } from "./credential-watch";
import { noteUse } from "./last-used";
import { ForbiddenError, UnauthenticatedError } from "@/lib/errors";

export const AGENT_KEY_PREFIX = "cs_agent_";
export const REVIEWER_TOKEN_PREFIX = "cs_rev_";

export type AgentActor = {
  kind: "agent";
  id: string;
  name: string;
  defaultQueueId: string;
  /** every queue the key may target, the default included */
  queueIds: string[];
  ownerUserId: string | null;
  /** how its calls meet the policy rules (read with the key; at most a second old, actor-cache.ts) */
  mode: AgentMode;
};

export type ReviewerActor = { kind: "reviewer"; id: string; name: string; email: string };

export type Actor = AgentActor | ReviewerActor;

/** The shape of `actor` in events and decisions. */
export function actorRef(actor: Actor) {
  return { kind: actor.kind, id: actor.id, name: actor.name };
}

/**
 * The Bearer credential of the request, or null. Any other Authorization header (`Basic …`, a
 * malformed Bearer) is no credential: such a request is authenticated by its session cookie,
 * and lib/http/api-route.ts must treat it as a cookie request (cross-site check) on this same test.
 */
export function bearerToken(headers: Headers): string | null {
  const header = headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * Who is calling: `Authorization: Bearer …` (an agent key or a reviewer token), else the web
 * app's session cookie. A credential found is remembered for a second (actor-cache.ts).
 */
export async function authenticate(db: Executor, headers: Headers): Promise<Actor> {
  return (await authenticateCredential(db, headers)).actor;
}

/**
 * `authenticate`, with the credential the caller used: what a stream or long-poll watches, to end
 * when it is revoked (lib/auth/credential-watch.ts).
 */
export async function authenticateCredential(
  db: Executor,
  headers: Headers,
): Promise<{ actor: Actor; credential: Credential }> {
  const token = bearerToken(headers);
  if (!token) {
    const session = await sessionUser(headers);
    if (session) {
      const { sessionId, ...user } = session;
      return {
        actor: { kind: "reviewer", ...user },
        credential: { kind: "session", id: sessionId },
      };
    }
    throw new UnauthenticatedError();
  }
  // Blocked before the lookup, the cache's included: see bearer-failures.ts for why a valid key
  // waits too.
  const address = clientAddress(headers);
  await assertNotLimited(address);
  const found = await actorOfToken(db, token);
  if (found) return found;
  await recordFailure(address);
  throw new UnauthenticatedError("That key or token is not valid (or was revoked).");
}

async function actorOfToken(
  db: Executor,
  token: string,
): Promise<{ actor: Actor; credential: Credential } | null> {
  const kind = token.startsWith(AGENT_KEY_PREFIX)
    ? "agent_key"
    : token.startsWith(REVIEWER_TOKEN_PREFIX)
      ? "reviewer_token"
      : null;
  if (!kind) return null;
  const tokenHash = sha256Hex(token);
  const credential: Credential = { kind, hash: tokenHash };
  let actor = cachedActor(tokenHash);
  if (!actor) {
    const generation = cacheGeneration();
    actor = await (kind === "agent_key" ? findAgentByKey : findReviewerByToken)(db, tokenHash);
    if (!actor) return null;
    rememberActor(tokenHash, actor, generation);
  }
  noteUse(kind, tokenHash);
  return { actor, credential };
}

async function findAgentByKey(db: Executor, keyHash: string): Promise<AgentActor | null> {
  // One query (every request authenticates): the key and the queues it may target.
  const [row] = await db
    .select({
      key: agentKeys,
      targets: sql<
        string | null
      >`(select group_concat(${agentKeyQueues.queueId}) from ${agentKeyQueues} where ${agentKeyQueues.agentKeyId} = ${agentKeys.id})`,
    })
    .from(agentKeys)
    .where(
      and(
        or(
          eq(agentKeys.keyHash, keyHash),
          // the key a rotation replaced, until its grace period ends (rotate-agent-key.ts)
          and(
            eq(agentKeys.previousKeyHash, keyHash),
            gt(agentKeys.previousKeyExpiresAt, Date.now()),
          ),
        ),
        isNull(agentKeys.revokedAt),
      ),
    );
  if (!row) return null;
  const { key: agent, targets } = row;
  const queueIds = [...new Set([agent.defaultQueueId, ...(targets ? targets.split(",") : [])])];
  return {
    kind: "agent",
    id: agent.id,
    name: agent.name,
    defaultQueueId: agent.defaultQueueId,
    queueIds,
    ownerUserId: agent.ownerUserId,
    mode: agent.mode,
  };
}

async function findReviewerByToken(db: Executor, tokenHash: string): Promise<ReviewerActor | null> {
  const [row] = await db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(reviewerTokens)
    .innerJoin(users, eq(users.id, reviewerTokens.userId))
    // A deactivated person's tokens are revoked with the deactivation; this also refuses them
    // should one be left (a token made by another process meanwhile).
    .where(
      and(
        eq(reviewerTokens.tokenHash, tokenHash),
        isNull(reviewerTokens.revokedAt),
        isNull(users.deactivatedAt),
      ),
    );
  return row ? { kind: "reviewer", ...row } : null;
}

export function requireAgent(actor: Actor): AgentActor {
  if (actor.kind !== "agent") throw new ForbiddenError("This endpoint takes an agent key.");
  return actor;
}

export function requireReviewer(actor: Actor): ReviewerActor {
  if (actor.kind !== "reviewer") {
    throw new ForbiddenError("This endpoint takes a reviewer's session or personal token.");
  }
  return actor;
}

/** The queues a reviewer belongs to (and so may see and decide). */
export async function reviewerQueueIds(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(eq(queueMembers.userId, userId));
  return rows.map((r) => r.queueId);
}
