import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ListRootsRequestSchema,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";
import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The gateway as an MCP client's config starts it: the bin `npm install` linked into
// node_modules/.bin (over lib/mcp-gateway/dist, which `npm run build` compiles), a child process
// spoken to over stdio by the official MCP client, in front of the real server-filesystem.

export const GATEWAY_BIN = join(process.cwd(), "node_modules", ".bin", "countersign-mcp-gateway");
export const FILESYSTEM_SERVER = join(
  process.cwd(),
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);

/**
 * Where test gateways keep their outcome spool (lib/mcp-gateway/spool.ts): never the real home.
 * One folder for every run: each gateway removes its own spool in it at a clean exit.
 */
export const TEST_STATE_HOME = join(tmpdir(), "countersign-test-gateway-state");
mkdirSync(TEST_STATE_HOME, { recursive: true, mode: 0o700 });

/** A fresh directory for server-filesystem to serve (its real path: the server resolves links). */
export function filesystemRoot(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), "countersign-gateway-fs-")));
}

export type Connected = {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
  /** the process the client started (the gateway, or the server when direct) */
  pid: number | null;
};

export type ClientSetup = {
  /** roots the client offers (a server that asks, roots/list, gets these) */
  roots?: string[];
  /** more of the client's capabilities (e.g. sampling), with `setup` adding their handlers */
  capabilities?: ClientCapabilities;
  setup?: (client: Client) => void;
};

export function newClient({ roots = [], capabilities = {}, setup }: ClientSetup = {}): Client {
  const client = new Client(
    { name: "gateway-test-client", version: "1.2.3" },
    {
      capabilities: {
        ...capabilities,
        ...(roots.length > 0 ? { roots: { listChanged: true } } : {}),
      },
    },
  );
  // The server asks for these (roots/list, a server→client request) right after initialize.
  if (roots.length > 0)
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: roots.map((root) => ({ uri: pathToFileURL(root).href, name: "test root" })),
    }));
  setup?.(client);
  return client;
}

async function connect(command: string, args: string[], options: ClientSetup = {}) {
  const transport = new StdioClientTransport({
    command,
    args,
    // the gateway's outcome spool (lib/mcp-gateway/spool.ts) in a folder of the tests' own
    env: { PATH: process.env.PATH ?? "", XDG_STATE_HOME: TEST_STATE_HOME },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => (stderr += chunk));
  const client = newClient(options);
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close(), pid: transport.pid };
}

/** The MCP client connected through the gateway to server-filesystem serving `root`. */
export function throughGateway(options: {
  countersignUrl: string;
  agentKey: string;
  root: string;
  name?: string;
  extra?: string[];
  /** roots the client offers (server-filesystem then serves those instead of `root`) */
  roots?: string[];
}): Promise<Connected> {
  return connect(
    process.execPath,
    [
      GATEWAY_BIN,
      "--url",
      options.countersignUrl,
      "--key",
      options.agentKey,
      ...(options.name === undefined ? [] : ["--name", options.name]),
      ...(options.extra ?? []),
      "--",
      process.execPath,
      FILESYSTEM_SERVER,
      options.root,
    ],
    { roots: options.roots },
  );
}

/** The MCP client through the gateway to any upstream command (`upstream`: its argv). */
export function gatewayInFrontOf(options: {
  countersignUrl: string;
  agentKey: string;
  /** the upstream command's argv; empty with --upstream-url in `extra` */
  upstream: string[];
  extra?: string[];
  client?: ClientSetup;
}): Promise<Connected> {
  return connect(
    process.execPath,
    [
      GATEWAY_BIN,
      "--url",
      options.countersignUrl,
      "--key",
      options.agentKey,
      ...(options.extra ?? []),
      ...(options.upstream.length > 0 ? ["--", ...options.upstream] : []),
    ],
    options.client,
  );
}

/** The same client connected to server-filesystem directly: what the gateway must look like. */
export function direct(root: string): Promise<Connected> {
  return connect(process.execPath, [FILESYSTEM_SERVER, root]);
}
