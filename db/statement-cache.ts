import { createRequire } from "node:module";

// The embedded driver under @libsql/client (the `libsql` package) compiles every statement anew
// on each execution: for the dozen statements of a write that was a fifth of a request's CPU.
// Its statements can be run again (they are reset before each run), so each connection keeps
// the ones it compiled, most recently used first, up to a bound (the SQL of a multi-row INSERT
// or an IN list varies with its length). The cache lives on globalThis: Next's bundle and the
// server's each load their own copy of db/, but there is one driver per process.
//
// A statement that failed may be left unfinished on its connection (npm run chaos found that an
// unfinished statement keeps COMMIT from ever succeeding there). A failed write therefore
// forgets every cached statement (`forgetStatements`), as a new connection would, so the error
// path behaves exactly as it did without the cache.

const MAX_PER_CONNECTION = 256;

type Caches = WeakMap<object, Map<string, unknown>>;
type CachedStatement = { columns(): unknown; raw(toggle?: boolean): unknown };
const state = globalThis as unknown as {
  __countersignStatements?: { caches: Caches };
};

export function cacheStatements(): void {
  if (state.__countersignStatements) return;
  state.__countersignStatements = { caches: new WeakMap() };
  const require = createRequire(import.meta.url);
  const Database = require("libsql") as { prototype: { prepare(sql: string): unknown } };
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: object, sql: string) {
    const caches = state.__countersignStatements!.caches;
    let cache = caches.get(this);
    if (!cache) caches.set(this, (cache = new Map()));
    const cached = cache.get(sql);
    if (cached) {
      // most recently used last: the first key is the one to drop
      cache.delete(sql);
      cache.set(sql, cached);
      return cached;
    }
    const statement = prepare.call(this, sql) as CachedStatement;
    // @libsql/client asks for the result columns twice per run; a compiled statement's columns
    // do not change (the schema changes only in migrations, before any statement is cached).
    const columns = statement.columns();
    statement.columns = () => columns;
    // It also calls raw(true) on every run to learn whether the statement returns rows, which
    // throws (and builds an error) for each one that does not: answer from the first call.
    const raw = statement.raw.bind(statement);
    let refusal: unknown = null;
    statement.raw = (toggle?: boolean) => {
      if (toggle === false) return raw(toggle);
      if (refusal) throw refusal;
      try {
        return raw(toggle);
      } catch (error) {
        refusal = error;
        throw error;
      }
    };
    cache.set(sql, statement);
    if (cache.size > MAX_PER_CONNECTION) cache.delete(cache.keys().next().value!);
    return statement;
  };
}

export function forgetStatements(): void {
  if (state.__countersignStatements) state.__countersignStatements.caches = new WeakMap();
}
