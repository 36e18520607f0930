import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { beginShutdown } from "@/lib/shutdown";
import {
  markClientAddressesStamped,
  parseTrustedProxies,
  stampClientAddress,
} from "./client-address";
import { matchApiRequest, serveApiRequest } from "./node-api";
import { matchStreamRoute, serveStream } from "./node-stream";

// The production server (`npm start`; built to dist/server.js by `npm run build`): Next.js's own
// request handler behind a plain node:http server that serves the two event streams itself
// (lib/http/node-stream.ts says why) and calls the API's route handlers itself, skipping Next's
// routing and rendering pipeline and its several ms of CPU per request (lib/http/node-api.ts;
// the table of route files is lib/http/api-routes.ts). `next dev` serves all of them through
// Next.js as usual.
//
// A custom server runs Next.js's production server in this process: `app.prepare()` loads the
// build and runs instrumentation.ts once (migrations, background work, the tailer), and proxy.ts
// and next.config.ts headers apply to what Next.js answers. It gives up `output: "standalone"`
// (not used) and Next's own signal handling, which is done here.
// This file (with the API route files it imports) and Next's bundle each load their own copy of
// lib/; what must be one per process (the database handle, the tailer, the shutdown signal,
// better-auth, the blocked bearer addresses, the mark that client addresses are stamped, the cache of authenticated actors, the background
// work) lives on globalThis. Requests are taken only once `app.prepare()` has run
// instrumentation.ts (migrations first).

const startedAt = Date.now();

const { values } = parseArgs({
  options: {
    hostname: { type: "string", short: "H", default: "127.0.0.1" },
    port: { type: "string", short: "p", default: process.env.PORT || "3000" },
  },
});
const hostname = values.hostname!;
const port = Number(values.port);
// Read by lib/ (better-auth's trusted origins) as under `next start`.
process.env.PORT = String(port);
// Set before Next.js loads: it picks its production React and settings from it.
(process.env as Record<string, string>).NODE_ENV = "production";

/** How long a stop waits for open requests (streams end at once) before it exits anyway. */
const SHUTDOWN_GRACE_MS = Number(process.env.SHUTDOWN_GRACE_MS) || 10_000;

// Deadlines for *receiving* a request: its headers, then the whole request with its body. A
// client trickling a body held a connection for Node's default 300 s; now it gets a 408 and the
// socket closes. Node stops counting once the request is received, so long-polls and event
// streams, whose answers take long, are not cut (lib/events/stream-slots.ts limits how many
// streams one caller holds instead). Checked every second, so a deadline is kept within one.
const HEADERS_TIMEOUT_MS = Number(process.env.HEADERS_TIMEOUT_MS) || 10_000;
const REQUEST_TIMEOUT_MS = Math.max(
  Number(process.env.REQUEST_TIMEOUT_MS) || 30_000,
  HEADERS_TIMEOUT_MS,
);

async function main(): Promise<void> {
  // A mistyped TRUSTED_PROXIES stops the start, rather than every request that would read it.
  parseTrustedProxies();
  markClientAddressesStamped();
  const { default: next } = await import("next");
  const app = next({ dev: false, hostname, port, dir: process.cwd() });
  await app.prepare();
  const handle = app.getRequestHandler();

  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    },
    (request, response) => {
      // Before anything reads the request: the client's address, from the socket (and a trusted
      // proxy's X-Forwarded-For), replacing any the client wrote (lib/http/client-address.ts).
      stampClientAddress(request);
      const stream = matchStreamRoute(request);
      if (stream) return void serveStream(request, response, stream);
      const api = matchApiRequest(request);
      if (api) return void serveApiRequest(request, response, api);
      void handle(request, response);
    },
  );
  server.on("error", (error) => {
    console.error(`Countersign could not listen on ${hostname}:${port}:`, error);
    process.exit(1);
  });
  await new Promise<void>((resolve) => server.listen(port, hostname, resolve));
  console.log(`Ready in ${Date.now() - startedAt} ms on http://${hostname}:${port}`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    // Streams and long-polls end on this (lib/shutdown.ts); other requests finish.
    beginShutdown();
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    server.close(() => {
      void app.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    });
    server.closeIdleConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  console.error("Countersign failed to start:", error);
  process.exit(1);
});
