import { asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "@/db/client";
import { agentKeys, mcpGatewayAgents, mcpGateways, type McpGateway } from "@/db/schema";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { openSecret, sealSecret, SECRET_PLACES } from "@/lib/auth/sealed-secrets";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";
import { SingleLineText } from "@/lib/text/stored-text";

// A hosted MCP gateway as stored and as shown. Its upstream headers (the upstream's own API token
// among them) are stored sealed, as one JSON value bound to the gateway's row, and never leave
// the server except towards the upstream itself: views carry only their names.

/** A path segment, and the server's name in policies (`name.tool`): no dots, no slashes. */
export const GatewayName = z
  .string()
  .trim()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,62}$/,
    "use 1–63 lowercase letters, digits, '-' or '_', starting with a letter or digit",
  );

/** Headers the MCP transport sets itself (or that name the connection): never taken from an admin. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

export const UpstreamHeaders = z
  .record(
    z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "not a valid header name")
      .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), "set by the MCP transport"),
    z
      .string()
      .min(1, "give the header a value")
      .max(8192)
      .regex(/^[^\r\n\0]*$/, "a header value is one line"),
  )
  .refine((headers) => Object.keys(headers).length <= 20, "at most 20 headers")
  .refine(
    (headers) =>
      new Set(Object.keys(headers).map((n) => n.toLowerCase())).size ===
      Object.keys(headers).length,
    "a header is named twice",
  );
export type UpstreamHeaders = z.infer<typeof UpstreamHeaders>;

export const GatewayUrl = SingleLineText.trim().min(1).max(2000);

/** The agent keys allowed on a gateway, by id. */
export const GatewayAgents = z.array(SingleLineText.min(1)).max(500);

export type McpGatewayView = {
  id: string;
  name: string;
  url: string;
  /** where agents connect (MCP streamable HTTP, their agent key as Bearer) */
  endpoint: string;
  /** the names of the headers sent upstream; their values are never shown again */
  headerNames: string[];
  status: McpGateway["status"];
  revision: number;
  agents: { id: string; name: string }[];
  createdAt: string;
  updatedAt: string;
};

export const gatewayEndpoint = (name: string) =>
  `${publicBaseUrl()}/api/mcp/gateways/${encodeURIComponent(name)}`;

export async function gatewayViews(db: Executor, id?: string): Promise<McpGatewayView[]> {
  const rows = await db
    .select()
    .from(mcpGateways)
    .where(id ? eq(mcpGateways.id, id) : undefined)
    .orderBy(asc(mcpGateways.name));
  const allowed = rows.length
    ? await db
        .select({ gatewayId: mcpGatewayAgents.gatewayId, id: agentKeys.id, name: agentKeys.name })
        .from(mcpGatewayAgents)
        .innerJoin(agentKeys, eq(agentKeys.id, mcpGatewayAgents.agentKeyId))
        .where(
          inArray(
            mcpGatewayAgents.gatewayId,
            rows.map((r) => r.id),
          ),
        )
        .orderBy(asc(agentKeys.name))
    : [];
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    url: row.url,
    endpoint: gatewayEndpoint(row.name),
    headerNames: row.headerNames,
    status: row.status,
    revision: row.revision,
    agents: allowed.filter((a) => a.gatewayId === row.id).map(({ id, name }) => ({ id, name })),
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
  }));
}

export async function gatewayView(db: Executor, id: string): Promise<McpGatewayView> {
  const [view] = await gatewayViews(db, id);
  if (!view) throw new NotFoundError("MCP gateway");
  return view;
}

export const sealHeaders = (gatewayId: string, headers: UpstreamHeaders) =>
  sealSecret(JSON.stringify(headers), SECRET_PLACES.mcpGatewayHeaders(gatewayId));

export function openHeaders(gateway: Pick<McpGateway, "id" | "headers">): Record<string, string> {
  return JSON.parse(
    openSecret(gateway.headers, SECRET_PLACES.mcpGatewayHeaders(gateway.id)),
  ) as Record<string, string>;
}

/** The agent keys named, each existing and not revoked; a clear 400 naming the first that is not. */
export async function checkAgents(db: Executor, ids: string[], path = "agents"): Promise<string[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const found = await db
    .select({ id: agentKeys.id, revokedAt: agentKeys.revokedAt })
    .from(agentKeys)
    .where(inArray(agentKeys.id, unique));
  const usable = new Set(found.filter((k) => k.revokedAt === null).map((k) => k.id));
  const issues = ids.flatMap((id, i) =>
    usable.has(id) ? [] : [{ path: `${path}.${i}`, message: "no agent key in use has this id" }],
  );
  if (issues.length)
    throw new InvalidRequestError(
      `Invalid request: ${issues[0]!.path}: ${issues[0]!.message}`,
      issues,
    );
  return unique;
}
