import { createServer } from "node:http";
import { format, parseArgs } from "node:util";
import { configReport } from "@/lib/http/check-config";
import { listenAddress } from "@/lib/config/listen-address";
import { loadEnvFiles } from "@/lib/config/load-env";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";
import { serveLogged } from "@/lib/log/request-log";
import { beginShutdown } from "@/lib/shutdown";
import { markClientAddressesStamped, stampClientAddress } from "@/lib/auth/client-address";
import { matchApiRequest, serveApiRequest } from "./node-api";
import { matchStreamRoute, serveStream } from "./node-stream";

// The production server (`npm start`; built to dist/server.js by `npm run build`): Next.js's own
// request handler behind a plain node:http server that serves the two event streams itself
// (lib/http/node-stream.ts says why) and calls the API's route handlers itself, skipping Next's
// routing and rendering pipeline and its several ms of CPU per request (lib/http/node-api.ts;
// the table of routes is lib/http/api-routes.ts). `next dev` serves all of them through
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

// Set before Next.js loads: it picks its production React and settings from it.
(process.env as Record<string, string>).NODE_ENV = "production";
// The .env files, read as the admin CLI and the demo read them (lib/config/load-env.ts), before
// any setting is: Next.js would load them only in app.prepare(), after this file read its own.
loadEnvFiles();
const configProblem = configReport();
if (configProblem) {
  process.stderr.write(`${configProblem}\n`);
  process.exit(1);
}
routeConsoleToLog();

// --hostname and --port win (tests pass them); else HOSTNAME and PORT (lib/config/listen-address.ts
// says why a machine name in HOSTNAME is not taken as an address).
const { values } = parseArgs({
  options: {
    hostname: { type: "string", short: "H" },
    port: { type: "string", short: "p" },
  },
});
const listen = values.hostname ? { address: values.hostname } : listenAddress();
const hostname = listen.address;
const port = values.port === undefined ? setting("PORT") : Number(values.port);
// Read by lib/ (better-auth's trusted origins) as under `next start`.
process.env.PORT = String(port);

/** How long a stop waits for open requests (streams end at once) before it exits anyway. */
const SHUTDOWN_GRACE_MS = setting("SHUTDOWN_GRACE_MS");

// Deadlines for *receiving* a request: its headers, then the whole request with its body. A
// client trickling a body held a connection for Node's default 300 s; now it gets a 408 and the
// socket closes. Node stops counting once the request is received, so long-polls and event
// streams, whose answers take long, are not cut (lib/events/stream-slots.ts limits how many
// streams one caller holds instead). Checked every second, so a deadline is kept within one.
// (lib/http/check-config.ts refuses a request deadline shorter than the headers'.)
const HEADERS_TIMEOUT_MS = setting("HEADERS_TIMEOUT_MS");
const REQUEST_TIMEOUT_MS = setting("REQUEST_TIMEOUT_MS");

/**
 * What Next.js and libraries print with console.* becomes log lines too, so the output stays one
 * JSON object per line (a collector would otherwise split a stack trace into many entries).
 */
function routeConsoleToLog(): void {
  const asLog =
    (level: "info" | "warn" | "error") =>
    (...args: unknown[]) => {
      const error = args.find((arg) => arg instanceof Error);
      log()[level](error ? { err: error } : {}, format(...args));
    };
  console.log = console.info = asLog("info");
  console.warn = asLog("warn");
  console.error = asLog("error");
}

async function main(): Promise<void> {
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
      // proxy's X-Forwarded-For), replacing any the client wrote (lib/auth/client-address.ts).
      stampClientAddress(request);
      // Its id, and one log line when it is done (lib/log/request-log.ts).
      serveLogged(request, response, () => {
        const stream = matchStreamRoute(request);
        if (stream) return void serveStream(request, response, stream);
        const api = matchApiRequest(request);
        if (api) return void serveApiRequest(request, response, api);
        void handle(request, response);
      });
    },
  );
  server.on("error", (error) => {
    log().fatal(
      { err: error },
      `Countersign could not listen on ${hostname}:${port}: ${error.message}`,
    );
    process.exit(1);
  });
  await new Promise<void>((resolve) => server.listen(port, hostname, resolve));
  if (listen.warning) log().warn(listen.warning);
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  log().info(
    { address: hostname, port },
    `Ready in ${Date.now() - startedAt} ms on http://${shown}:${port}`,
  );

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
  log().fatal({ err: error }, `Countersign failed to start: ${error?.message ?? error}`);
  process.exit(1);
});
