// The command line of countersign-mcp-gateway, as issue 25 fixes it:
//   countersign-mcp-gateway --url URL --key KEY [--name NAME] -- UPSTREAM_COMMAND [ARGS…]
//   countersign-mcp-gateway --url URL --key KEY [--name NAME] --upstream-url URL [--upstream-header 'Name: value']…
// Parsing is pure (argv and env in, options or a usage error out) so it is tested without a process.

import { createHash } from "node:crypto";

export type Upstream =
  | { kind: "stdio"; command: string; args: string[] }
  | { kind: "http"; url: URL; headers: Record<string, string>; sse: boolean };

/**
 * A fingerprint of the upstream: a hash of its command and arguments, or of its URL (headers
 * left out: tokens rotate). Sent with each call, so a decision is picked up only by a gateway in
 * front of the same upstream, never by one of the same name in front of another (dev and prod).
 */
export function upstreamFingerprint(upstream: Upstream): string {
  const what =
    upstream.kind === "stdio"
      ? JSON.stringify(["stdio", upstream.command, ...upstream.args])
      : JSON.stringify([upstream.sse ? "sse" : "http", upstream.url.href]);
  return createHash("sha256").update(what).digest("hex").slice(0, 16);
}

export type GatewayOptions = {
  countersignUrl: string;
  agentKey: string;
  /** the upstream server's name on cards and in policies; default its serverInfo.name */
  name: string | null;
  upstream: Upstream;
  /** the queue (id or name) cards go to; default the agent key's */
  queue: string | null;
  /** the decision's deadline on the server (seconds); default the queue's */
  timeoutSecs: number | null;
  /** how long a forwarded call may take upstream before it is failed */
  upstreamTimeoutMs: number;
  /** answer a waiting call "still awaiting approval, call again" after this long (0: never; null: see GateSettings) */
  answerWithinMs: number | null;
  /** serve streamable HTTP at http://host:port/mcp instead of stdio */
  listen: { host: string; port: number } | null;
  /** where unsent outcome reports are kept (spool.ts); null: the OS's state directory */
  spool: string | null;
};

export type ParseResult =
  | { kind: "run"; options: GatewayOptions }
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "error"; message: string };

const DEFAULT_UPSTREAM_TIMEOUT_SECS = 600;

/** `argv` without node and the script; `env` for COUNTERSIGN_URL and COUNTERSIGN_AGENT_KEY. */
export function parseArgs(argv: string[], env: Record<string, string | undefined>): ParseResult {
  const separator = argv.indexOf("--");
  const flags = separator === -1 ? argv : argv.slice(0, separator);
  const command = separator === -1 ? [] : argv.slice(separator + 1);

  let url = env.COUNTERSIGN_URL || null;
  let key = env.COUNTERSIGN_AGENT_KEY || null;
  let name: string | null = null;
  let upstreamUrl: string | null = null;
  let queue: string | null = null;
  let timeoutSecs: number | null = null;
  let upstreamTimeoutSecs = DEFAULT_UPSTREAM_TIMEOUT_SECS;
  let listen: { host: string; port: number } | null = null;
  let listenAny = false;
  let answerWithinMs: number | null = null;
  let spool: string | null = null;
  const headers: Record<string, string> = {};

  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i]!;
    if (flag === "--help" || flag === "-h") return { kind: "help" };
    if (flag === "--version") return { kind: "version" };
    if (flag === "--listen-any") {
      listenAny = true;
      continue;
    }
    // `--flag=value` and `--flag value` both work.
    const eq = flag.startsWith("--") ? flag.indexOf("=") : -1;
    const nameOf = eq === -1 ? flag : flag.slice(0, eq);
    if (!VALUE_FLAGS.has(nameOf)) {
      if (!flag.startsWith("-"))
        return error(
          `unexpected '${flag}': put the upstream server's command after '--', e.g. -- npx -y @modelcontextprotocol/server-filesystem /tmp`,
        );
      return error(`unknown option '${nameOf}'`);
    }
    let value: string | undefined;
    if (eq !== -1) value = flag.slice(eq + 1);
    else {
      value = flags[i + 1];
      if (value === undefined || value.startsWith("--")) return error(`${nameOf} needs a value`);
      i++;
    }
    if (value === "") return error(`${nameOf} needs a value`);
    switch (nameOf) {
      case "--url":
        url = value;
        break;
      case "--key":
        key = value;
        break;
      case "--name":
        name = value;
        break;
      case "--upstream-url":
        upstreamUrl = value;
        break;
      case "--upstream-header": {
        const colon = value.indexOf(":");
        const header = colon === -1 ? "" : value.slice(0, colon).trim();
        if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header))
          return error(`--upstream-header must look like 'Name: value', got '${value}'`);
        headers[header] = value.slice(colon + 1).trim();
        break;
      }
      case "--queue":
        queue = value;
        break;
      case "--timeout": {
        const secs = Number(value);
        if (!Number.isInteger(secs) || secs < 1 || secs > 30 * 24 * 3600)
          return error(`--timeout is whole seconds from 1 to 2592000 (30 days), got '${value}'`);
        timeoutSecs = secs;
        break;
      }
      case "--listen": {
        // HOST:PORT, [v6]:PORT, or a bare PORT (loopback)
        const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value);
        const port = Number(match?.[2]);
        if (!match || port > 65535)
          return error(`--listen is HOST:PORT (e.g. 127.0.0.1:8931), got '${value}'`);
        listen = { host: (match[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
        break;
      }
      case "--answer-within": {
        const secs = Number(value);
        if (!Number.isFinite(secs) || secs < 0)
          return error(`--answer-within is seconds (0: never), got '${value}'`);
        answerWithinMs = secs * 1000;
        break;
      }
      case "--spool":
        spool = value;
        break;
      case "--upstream-timeout": {
        const secs = Number(value);
        if (!Number.isFinite(secs) || secs <= 0)
          return error(`--upstream-timeout is seconds above 0, got '${value}'`);
        upstreamTimeoutSecs = secs;
        break;
      }
    }
  }

  if (!url) return error("the Countersign address is missing: --url URL or COUNTERSIGN_URL");
  let countersignUrl: URL;
  try {
    countersignUrl = new URL(url);
  } catch {
    return error(`--url is not a URL: '${url}'`);
  }
  if (countersignUrl.protocol !== "http:" && countersignUrl.protocol !== "https:")
    return error(`--url must be http(s), got '${url}'`);
  if (!key) return error("the agent key is missing: --key KEY or COUNTERSIGN_AGENT_KEY");

  let upstream: Upstream;
  if (upstreamUrl !== null) {
    if (command.length > 0)
      return error(
        "give the upstream either as a command after '--' or as --upstream-url, not both",
      );
    let parsed: URL;
    try {
      parsed = new URL(upstreamUrl);
    } catch {
      return error(`--upstream-url is not a URL: '${upstreamUrl}'`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      return error(`--upstream-url must be http(s), got '${upstreamUrl}'`);
    // Legacy HTTP+SSE servers are reached at their /sse endpoint.
    upstream = { kind: "http", url: parsed, headers, sse: /\/sse\/?$/.test(parsed.pathname) };
  } else {
    if (Object.keys(headers).length > 0)
      return error("--upstream-header goes with --upstream-url, not with an upstream command");
    if (command.length === 0)
      return error(
        "no upstream MCP server: give its command after '--' (… -- npx -y @modelcontextprotocol/server-filesystem /tmp) or --upstream-url URL",
      );
    upstream = { kind: "stdio", command: command[0]!, args: command.slice(1) };
  }

  if (listen && !listenAny && !isLoopback(listen.host))
    return error(
      `--listen ${listen.host} is not a loopback address: anyone who reaches it could use the upstream server under your agent key. Add --listen-any if that is what you want.`,
    );
  if (listenAny && !listen) return error("--listen-any goes with --listen HOST:PORT");

  return {
    kind: "run",
    options: {
      countersignUrl: countersignUrl.toString().replace(/\/$/, ""),
      agentKey: key,
      name,
      upstream,
      queue,
      timeoutSecs,
      upstreamTimeoutMs: upstreamTimeoutSecs * 1000,
      answerWithinMs,
      listen,
      spool,
    },
  };
}

const VALUE_FLAGS = new Set([
  "--url",
  "--key",
  "--name",
  "--upstream-url",
  "--upstream-header",
  "--queue",
  "--timeout",
  "--upstream-timeout",
  "--listen",
  "--answer-within",
  "--spool",
]);

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function error(message: string): ParseResult {
  return { kind: "error", message };
}

export const HELP = `countersign-mcp-gateway: put a person's approval in front of any MCP server.

Every tools/call the MCP client makes is first put to Countersign as a call of your agent key:
policies allow it (forwarded at once) or deny it (never forwarded; the model is told why), and
anything else waits in the queue until a reviewer approves it (forwarded with exactly the
approved arguments, the reviewer's edit if any), rejects it, or its deadline passes. Everything
else the server offers (resources, prompts, completion, logging, sampling …) passes unchanged.

Usage:
  countersign-mcp-gateway --url URL --key KEY [options] -- UPSTREAM_COMMAND [ARGS…]
  countersign-mcp-gateway --url URL --key KEY [options] --upstream-url URL [--upstream-header 'Name: value']…

Options:
  --url URL                 Countersign's address (or COUNTERSIGN_URL)
  --key KEY                 an agent key, cs_agent_… (or COUNTERSIGN_AGENT_KEY)
  --name NAME               the upstream server's name on cards and in policies
                            (default: the name the server gives); a policy's tool pattern
                            matches the tool's own name or NAME.tool, e.g. filesystem.write_*
  --upstream-url URL        an upstream over streamable HTTP (legacy SSE when the URL ends in /sse)
  --upstream-header 'N: v'  a header for every upstream HTTP request (repeatable)
  --queue QUEUE             the queue cards go to (default: the agent key's)
  --timeout SECS            the decision's deadline (default: the queue's)
  --answer-within SECS      after this long a waiting call is answered "awaiting approval at URL,
                            call again with the same arguments"; the card stays, and the identical
                            call picks up its decision once (default: 50 for a client that sent no
                            progress token, else no limit; 0: never)
  --upstream-timeout SECS   how long a forwarded call may run upstream (default ${DEFAULT_UPSTREAM_TIMEOUT_SECS})
  --listen HOST:PORT        serve MCP clients over streamable HTTP at http://HOST:PORT/mcp instead of
                            stdio (each client session gets its own upstream and run); loopback only
  --listen-any              allow --listen on an address other than loopback
  --spool DIR               where the tools' outcome reports wait until Countersign took them, so a
                            gateway killed before sending them sends them at its next start
                            (default: the OS's state directory, e.g. ~/.local/state/
                            countersign-mcp-gateway/spool; one folder per --name and agent key)
  --help, --version

The MCP client talks to the gateway over stdio, so its config launches the gateway in place of
the server. Claude Code (.mcp.json), Claude Desktop (claude_desktop_config.json) and Cursor
(.cursor/mcp.json) all take the same shape:

  {
    "mcpServers": {
      "filesystem": {
        "command": "npx",
        "args": [
          "countersign-mcp-gateway", "--name", "filesystem", "--",
          "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/project"
        ],
        "env": {
          "COUNTERSIGN_URL": "https://countersign.example.com",
          "COUNTERSIGN_AGENT_KEY": "cs_agent_…"
        }
      }
    }
  }

or from a shell:  claude mcp add filesystem --env COUNTERSIGN_URL=… --env COUNTERSIGN_AGENT_KEY=… \\
                    -- npx countersign-mcp-gateway --name filesystem -- npx -y @modelcontextprotocol/server-filesystem ~/project

Calls wait as long as the reviewers take; the gateway sends progress while it waits, so set
the client's tool timeout high (Claude Code: MCP_TOOL_TIMEOUT). Diagnostics go to stderr.
`;
