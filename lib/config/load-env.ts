// A CommonJS module: Node's ESM loader (tsx, dist/server.js) sees only its default export.
import nextEnv from "@next/env";

// The one way every entry point reads `.env` files: the server (lib/http/server.ts), the admin
// CLI, the demo and `npm run db:migrate`. It is Next.js's own loader, which the production
// server ran anyway, with the files of production mode — `.env.production.local`, `.env.local`,
// `.env.production`, `.env`, first one wins, from the working directory (where npm runs
// scripts: the project). Variables already in the environment win over every file. Before,
// the CLI read no file, so `npm run admin` could silently work on another database than the
// server it sat beside.

/** Where DATABASE_URL came from: the admin CLI names it, since a default file is easy to miss. */
export type DatabaseUrlSource = "environment" | ".env" | "default";

let urlSource: DatabaseUrlSource | undefined;

/**
 * Loads the `.env` files into process.env once (later calls only repeat the answer) and tells
 * where DATABASE_URL came from, which only a look before loading can tell.
 */
export function loadEnvFiles(dir = process.cwd()): DatabaseUrlSource {
  if (urlSource) return urlSource;
  const setBefore = process.env.DATABASE_URL !== undefined;
  // Next.js picks its files by NODE_ENV; the server runs as production, and so must every
  // other reader: a CLI started from a test runner (NODE_ENV=test) would skip .env.local.
  const nodeEnv = process.env.NODE_ENV;
  (process.env as Record<string, string | undefined>).NODE_ENV = "production";
  try {
    // Quiet: Next.js's "Loaded env from …" would land in the CLI's output, which scripts parse.
    nextEnv.loadEnvConfig(dir, false, {
      info: () => {},
      error: (...args: unknown[]) => console.error(...args),
    });
  } finally {
    if (nodeEnv === undefined) delete (process.env as Record<string, string | undefined>).NODE_ENV;
    else (process.env as Record<string, string | undefined>).NODE_ENV = nodeEnv;
  }
  urlSource = setBefore
    ? "environment"
    : process.env.DATABASE_URL !== undefined
      ? ".env"
      : "default";
  return urlSource;
}
