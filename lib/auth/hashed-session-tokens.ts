import type { drizzleAdapter } from "better-auth/adapters/drizzle";
import { and, eq, sql } from "drizzle-orm";
import { writeTransaction } from "@/db/client";
import { sessions } from "@/db/schema";
import { sha256Hex } from "@/lib/ids";

// Reviewer sessions are stored like agent keys and reviewer tokens: as SHA-256 hashes. better-auth
// keeps the token it puts in the cookie in `session.token` and looks sessions up by it, so a copy
// of the database (a backup, a leaked file) would otherwise be a set of live sessions. This wraps
// better-auth's database adapter: on the `session` model, a token written or matched is hashed on
// the way in, and a row coming back carries the raw token the caller asked with (better-auth sets
// the refreshed cookie from the row it gets back). The cookie itself is unchanged.

type AdapterFactory = ReturnType<typeof drizzleAdapter>;
type Adapter = ReturnType<AdapterFactory>;
type TransactionAdapter = Parameters<Parameters<Adapter["transaction"]>[0]>[0];
type Where = Parameters<Adapter["findOne"]>[0]["where"][number];
/** hash → the raw token it was made from, for the rows of one call */
type Raw = Map<string, string>;

const SESSION_MODEL = "session";
const TOKEN_FIELD = "token";
/** What a stored hash looks like; better-auth's raw tokens are 32 alphanumerics. */
const HASH_LENGTH = 64;

/** `factory` (better-auth's drizzle adapter) with session tokens hashed at rest. */
export function hashSessionTokens(factory: AdapterFactory): AdapterFactory {
  return (options) => {
    const adapter = factory(options);
    return {
      ...wrap(adapter),
      transaction: (work) => adapter.transaction((trx) => work(wrap(trx))),
    };
  };
}

function hashed(raw: Raw, token: string): string {
  const hash = sha256Hex(token);
  raw.set(hash, token);
  return hash;
}

function hashWhere(raw: Raw, where: Where[] | undefined): Where[] | undefined {
  return where?.map((clause) => {
    if (clause.field !== TOKEN_FIELD) return clause;
    const { value } = clause;
    if (typeof value === "string") return { ...clause, value: hashed(raw, value) };
    if (Array.isArray(value) && value.every((v) => typeof v === "string"))
      return { ...clause, value: value.map((v) => hashed(raw, v)) };
    return clause;
  });
}

function hashToken<T extends Record<string, unknown> | undefined>(raw: Raw, data: T): T {
  return data && typeof data[TOKEN_FIELD] === "string"
    ? { ...data, [TOKEN_FIELD]: hashed(raw, data[TOKEN_FIELD]) }
    : data;
}

/** Rows (one, many, or none) with their hashes swapped back for the raw tokens asked with. */
function restore<R>(raw: Raw, result: R): R {
  if (Array.isArray(result)) return result.map((row) => restore(raw, row)) as R;
  if (result && typeof result === "object" && TOKEN_FIELD in result) {
    const token = (result as Record<string, unknown>)[TOKEN_FIELD];
    // A row found some other way (by user, by id) keeps its hash: the raw token is not known.
    if (typeof token === "string" && raw.has(token))
      return { ...result, [TOKEN_FIELD]: raw.get(token) };
  }
  return result;
}

function wrap<A extends TransactionAdapter>(adapter: A): A {
  const isSession = (args: { model: string }) => args.model === SESSION_MODEL;
  return {
    ...adapter,
    create: async (args) => {
      if (!isSession(args)) return adapter.create(args);
      const raw: Raw = new Map();
      return restore(raw, await adapter.create({ ...args, data: hashToken(raw, args.data) }));
    },
    findOne: async (args) => {
      if (!isSession(args)) return adapter.findOne(args);
      const raw: Raw = new Map();
      return restore(raw, await adapter.findOne({ ...args, where: hashWhere(raw, args.where)! }));
    },
    findMany: async (args) => {
      if (!isSession(args)) return adapter.findMany(args);
      const raw: Raw = new Map();
      return restore(raw, await adapter.findMany({ ...args, where: hashWhere(raw, args.where) }));
    },
    count: (args) =>
      isSession(args)
        ? adapter.count({ ...args, where: hashWhere(new Map(), args.where) })
        : adapter.count(args),
    update: async (args) => {
      if (!isSession(args)) return adapter.update(args);
      const raw: Raw = new Map();
      const where = hashWhere(raw, args.where)!;
      return restore(
        raw,
        await adapter.update({ ...args, where, update: hashToken(raw, args.update) }),
      );
    },
    updateMany: (args) => {
      if (!isSession(args)) return adapter.updateMany(args);
      const raw: Raw = new Map();
      const where = hashWhere(raw, args.where)!;
      return adapter.updateMany({ ...args, where, update: hashToken(raw, args.update) });
    },
    delete: (args) =>
      isSession(args)
        ? adapter.delete({ ...args, where: hashWhere(new Map(), args.where)! })
        : adapter.delete(args),
    deleteMany: (args) =>
      isSession(args)
        ? adapter.deleteMany({ ...args, where: hashWhere(new Map(), args.where)! })
        : adapter.deleteMany(args),
    consumeOne: async (args) => {
      if (!isSession(args)) return adapter.consumeOne(args);
      const raw: Raw = new Map();
      return restore(
        raw,
        await adapter.consumeOne({ ...args, where: hashWhere(raw, args.where)! }),
      );
    },
    incrementOne: async (args) => {
      if (!isSession(args)) return adapter.incrementOne(args);
      const raw: Raw = new Map();
      const where = hashWhere(raw, args.where)!;
      return restore(raw, await adapter.incrementOne({ ...args, where }));
    },
  };
}

/**
 * Start-up: sessions written before tokens were hashed hold the raw token; hash them in place, so
 * the signed-in keep their sessions. Idempotent (a hash is 64 characters, a raw token 32) and safe
 * with several instances starting at once (each row is rewritten only if it still holds its raw
 * token). Returns how many rows it hashed.
 */
export async function hashStoredSessionTokens(): Promise<number> {
  return writeTransaction(async (tx) => {
    const plain = await tx
      .select({ id: sessions.id, token: sessions.token })
      .from(sessions)
      .where(sql`length(${sessions.token}) <> ${HASH_LENGTH}`);
    for (const row of plain)
      await tx
        .update(sessions)
        .set({ token: sha256Hex(row.token) })
        .where(and(eq(sessions.id, row.id), eq(sessions.token, row.token)));
    return plain.length;
  });
}
