import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import {
  HELP,
  parseArgs,
  upstreamFingerprint,
  type GatewayOptions,
  type Upstream,
} from "./args.js";
import { Countersign } from "@countersign/sdk";
import { CountersignGate } from "./countersign-gate.js";
import { keepAliveFetch } from "./http-fetch.js";
import { listenHttp } from "./listen.js";
import { OutcomeReports } from "./outcome-reports.js";
import { Relay, type RelayFacts } from "./relay.js";
import { defaultSpoolRoot, spoolAt, spoolDirectory, type OutcomeSpool } from "./spool.js";

// countersign-mcp-gateway: serves the MCP client over stdio, relays to the upstream server, and
// puts every tools/call to Countersign first. stdout is the MCP channel: diagnostics go to stderr.

const log = (line: string) => process.stderr.write(`countersign-mcp-gateway: ${line}\n`);

/** Runs the gateway; resolves with the exit code. */
export async function main(argv: string[], env = process.env): Promise<number> {
  const parsed = parseArgs(argv, env);
  if (parsed.kind === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (parsed.kind === "version") {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (parsed.kind === "error") {
    log(`${parsed.message}\nRun countersign-mcp-gateway --help for usage.`);
    return 2;
  }
  return serve(parsed.options, env);
}

/** One MCP client session: its upstream, its run, the relay between them. */
export type Session = {
  /** ends the session as if its client left (SIGINT, SIGTERM) */
  stop: () => void;
  /** resolves once the session ended and its run was closed: 0 client left, 1 upstream exited */
  ended: Promise<number>;
  /** the client stopped listening for this call's answer (Relay.abandon) */
  abandon: (id: RequestId) => void;
};

/** Starts a session for the client on `downstream` (stdio, or one HTTP session). */
export async function openSession(
  options: GatewayOptions,
  env: NodeJS.ProcessEnv,
  downstream: Transport,
): Promise<Session> {
  const upstream = upstreamTransport(options.upstream, env);
  // What the relay learns from initialize (both sides' names), read by the gate for its cards.
  const facts: RelayFacts = { clientInfo: null, serverInfo: null };
  const upstreamId = upstreamFingerprint(options.upstream);
  let warned = false;
  const serverName = () => {
    if (options.name !== null) return options.name;
    const name = facts.serverInfo?.name ?? upstreamLabel(options.upstream);
    // The upstream chose this name itself: it scopes policies, so say so once.
    if (!warned) {
      warned = true;
      log(
        `no --name given: using '${name}', the name the upstream reports, for cards and policies; set --name to choose it`,
      );
    }
    return name;
  };
  const gate = new CountersignGate(
    {
      baseUrl: options.countersignUrl,
      apiKey: options.agentKey,
      spool: spoolFor(options, env),
    },
    () => ({
      server: serverName(),
      upstreamId,
      serverVersion: facts.serverInfo?.version ?? null,
      client: facts.clientInfo?.name ?? null,
      clientVersion: facts.clientInfo?.version ?? null,
      upstreamTransport:
        options.upstream.kind === "stdio" ? "stdio" : options.upstream.sse ? "sse" : "http",
    }),
    {
      queue: options.queue,
      timeoutSecs: options.timeoutSecs,
      answerWithinMs: options.answerWithinMs,
    },
  );
  const relay = new Relay(downstream, upstream, gate, {
    facts,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
    log,
  });
  await relay.start();
  const ended = (async () => {
    const side = await relay.closed;
    if (side === "upstream") log("the upstream MCP server exited");
    await relay.drain();
    await gate.close(side === "upstream" ? { failed: "The upstream MCP server exited." } : {});
    await upstream.close().catch(() => {});
    await downstream.close().catch(() => {});
    return side === "upstream" ? 1 : 0;
  })();
  // Stopping the gateway ends the session as the client leaving would: its run is completed.
  return {
    stop: () => void downstream.close().catch(() => {}),
    ended,
    abandon: (id) => void relay.abandon(id),
  };
}

async function serve(options: GatewayOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const spool = spoolFor(options, env);
  // Reports an earlier gateway of this name and key left unsent (killed): sent now, alone.
  const recovered = new OutcomeReports(
    new Countersign({
      baseUrl: options.countersignUrl,
      apiKey: options.agentKey,
      fetch: keepAliveFetch,
      retry: { retries: 2, minDelayMs: 200, maxDelayMs: 1000 },
      requestTimeoutMs: 15_000,
    }),
    () => Promise.reject(new Error("no run: recovered reports name their own")),
    log,
    spool,
  );
  recovered.adopt(spool.recover());
  try {
    return await serveSessions(options, env);
  } finally {
    const unsent = await recovered.flush(5_000);
    if (unsent > 0) log(`${unsent} earlier tool outcome report(s) are kept for the next start`);
    spool.close();
  }
}

async function serveSessions(options: GatewayOptions, env: NodeJS.ProcessEnv): Promise<number> {
  if (options.listen) return listenHttp(options, env, openSession, log);
  let session: Session;
  try {
    session = await openSession(options, env, new StdioServerTransport());
  } catch (error) {
    log(`could not start the upstream MCP server: ${(error as Error).message}`);
    return 1;
  }
  process.once("SIGINT", session.stop);
  process.once("SIGTERM", session.stop);
  // The client closing our stdin is it leaving (the SDK's stdio transport does not report that).
  process.stdin.once("end", session.stop);
  return session.ended;
}

/** The process's outcome spool for this gateway name (or upstream) and agent key. */
function spoolFor(options: GatewayOptions, env: NodeJS.ProcessEnv): OutcomeSpool {
  const name = options.name ?? `upstream-${upstreamFingerprint(options.upstream)}`;
  const root = options.spool ?? defaultSpoolRoot(env);
  return spoolAt(spoolDirectory(root, name, options.countersignUrl, options.agentKey), log);
}

function upstreamTransport(upstream: Upstream, env: NodeJS.ProcessEnv): Transport {
  if (upstream.kind === "stdio") {
    // The upstream gets the gateway's environment (its own tokens, PATH …) but never the agent key.
    const childEnv: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) {
      if (value !== undefined && name !== "COUNTERSIGN_AGENT_KEY") childEnv[name] = value;
    }
    return new StdioClientTransport({
      command: upstream.command,
      args: upstream.args,
      env: childEnv,
      stderr: "inherit",
    });
  }
  const requestInit = { headers: upstream.headers };
  return upstream.sse
    ? new SSEClientTransport(upstream.url, { requestInit })
    : new StreamableHTTPClientTransport(upstream.url, { requestInit });
}

function upstreamLabel(upstream: Upstream): string {
  return upstream.kind === "stdio" ? upstream.command : upstream.url.host;
}

function version(): string {
  const manifest = JSON.parse(
    readFileSync(new URL("../package.json", import.meta.url), "utf8"),
  ) as { version: string };
  return manifest.version;
}
