import { eq } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { mcpGatewayAgents, mcpGateways } from "@/db/schema";
import { guard, insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { managerOf, requireAdmin, stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import {
  checkAgents,
  GatewayAgents,
  GatewayName,
  GatewayUrl,
  gatewayView,
  sealHeaders,
  UpstreamHeaders,
  type McpGatewayView,
} from "./gateway-record";
import { checkPlainHttpCredentials, checkUpstreamUrl } from "./upstream-target";

export const CreateMcpGatewayInput = z.strictObject({
  name: GatewayName,
  /** the upstream MCP server's streamable HTTP endpoint */
  url: GatewayUrl,
  /** sent with every request upstream (the upstream's own token): stored sealed, never shown again */
  headers: UpstreamHeaders.default({}),
  /** the agent keys (ids) that may use it */
  agents: GatewayAgents.default([]),
});
export type CreateMcpGatewayInput = z.input<typeof CreateMcpGatewayInput>;

/**
 * `POST /mcp-gateways` (admins): a hosted gateway. The URL passes the webhook targets' SSRF check
 * and the agents exist, before one write batch: the gateway (headers sealed), its agents, and an
 * `mcp_gateway.created` event naming the headers but never their values.
 */
export async function createMcpGateway(
  caller: QueueCaller,
  body: unknown,
): Promise<McpGatewayView> {
  const input = parseInput(CreateMcpGatewayInput, body);
  const db = getDb();
  const manager = await managerOf(db, caller);
  requireAdmin(manager, "add MCP gateways");
  await checkUpstreamUrl(input.url);
  checkPlainHttpCredentials(input.url, Object.keys(input.headers).length);
  const id = await untilWritten(async () => {
    const [clash] = await db
      .select({ id: mcpGateways.id })
      .from(mcpGateways)
      .where(eq(mcpGateways.name, input.name));
    if (clash)
      throw new ConflictError(
        "already_exists",
        `An MCP gateway named '${input.name}' exists.`,
        await gatewayView(db, clash.id),
      );
    const agentIds = await checkAgents(db, input.agents);
    const id = newId();
    const now = Date.now();
    const headerNames = Object.keys(input.headers);
    await commit([
      ...stillAdmin(manager),
      // a gateway of the same name created meanwhile: the next attempt answers 409
      guard("not exists (select 1 from mcp_gateways where name = ?)", input.name),
      // the agents are still in use (not revoked meanwhile)
      ...agentIds.map((agentId) =>
        guard("exists (select 1 from agent_keys where id = ? and revoked_at is null)", agentId),
      ),
      insertRows(mcpGateways, [
        {
          id,
          name: input.name,
          url: input.url,
          headers: sealHeaders(id, input.headers),
          headerNames,
          createdAt: now,
          updatedAt: now,
        },
      ]),
      ...(agentIds.length
        ? [
            insertRows(
              mcpGatewayAgents,
              agentIds.map((agentKeyId) => ({ gatewayId: id, agentKeyId })),
            ),
          ]
        : []),
      eventRows({
        type: "mcp_gateway.created",
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: { gatewayId: id, name: input.name, url: input.url, headerNames, agentIds },
      }),
    ]);
    return id;
  });
  return gatewayView(db, id);
}
