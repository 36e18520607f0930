import { eq } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { mcpGatewayAgents, mcpGateways, MCP_GATEWAY_STATUSES } from "@/db/schema";
import {
  changedRow,
  guard,
  insertRows,
  statement,
  untilWritten,
  updateRow,
  type Statement,
} from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { ConflictError, InvalidRequestError, NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
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
import { endGatewaySessions } from "./hosted-sessions";
import { checkPlainHttpCredentials, checkUpstreamUrl } from "./upstream-target";

export const EditMcpGatewayInput = z.strictObject({
  /** the revision the editor saw: someone else's edit in between is a 409 */
  expectedRevision: z.number().int().positive(),
  name: GatewayName.optional(),
  url: GatewayUrl.optional(),
  /** replaces every header (omit to keep them; `{}` removes them) */
  headers: UpstreamHeaders.optional(),
  /** replaces the agent keys allowed on it */
  agents: GatewayAgents.optional(),
  /** `enabled` turns a disabled gateway back on (POST …/disable turns it off) */
  status: z.enum(MCP_GATEWAY_STATUSES).optional(),
});
export type EditMcpGatewayInput = z.input<typeof EditMcpGatewayInput>;

/**
 * `PATCH /mcp-gateways/{id}` (admins). A new URL on another origin needs the headers again: the
 * stored ones were given for the old upstream and are only ever sent there. One write batch,
 * compare-and-swapped on the revision: the gateway, its agents when given, and an
 * `mcp_gateway.updated` event naming what changed (never a header's value). Sessions open on the
 * old settings end at their next request (lib/mcp-gateways/hosted-sessions.ts).
 */
export async function editMcpGateway(
  caller: QueueCaller,
  gatewayId: string,
  body: unknown,
): Promise<McpGatewayView> {
  const input = parseInput(EditMcpGatewayInput, body);
  const db = getDb();
  const manager = await managerOf(db, caller);
  requireAdmin(manager, "edit MCP gateways");
  if (input.url !== undefined) await checkUpstreamUrl(input.url);
  await untilWritten(async () => {
    const [before] = await db.select().from(mcpGateways).where(eq(mcpGateways.id, gatewayId));
    if (!before) throw new NotFoundError("MCP gateway");
    if (before.revision !== input.expectedRevision)
      throw new ConflictError(
        "stale_revision",
        `The gateway was changed since revision ${input.expectedRevision}; it is at revision ${before.revision}.`,
        await gatewayView(db, gatewayId),
      );
    const urlChanged = input.url !== undefined && input.url !== before.url;
    if (
      urlChanged &&
      input.headers === undefined &&
      before.headerNames.length > 0 &&
      new URL(input.url!).origin !== new URL(before.url).origin
    ) {
      const message =
        "give the headers again when the upstream moves to another origin: the stored ones are only sent where they were given for";
      throw new InvalidRequestError(`Invalid request: headers: ${message}`, [
        { path: "headers", message },
      ]);
    }
    // the headers in force after the edit, to the URL in force after it
    checkPlainHttpCredentials(
      input.url ?? before.url,
      input.headers ? Object.keys(input.headers).length : before.headerNames.length,
    );
    const renamed = input.name !== undefined && input.name !== before.name;
    if (renamed) {
      const [clash] = await db
        .select({ id: mcpGateways.id })
        .from(mcpGateways)
        .where(eq(mcpGateways.name, input.name!));
      if (clash)
        throw new ConflictError(
          "already_exists",
          `An MCP gateway named '${input.name}' exists.`,
          await gatewayView(db, clash.id),
        );
    }
    const agentIds = input.agents === undefined ? null : await checkAgents(db, input.agents);
    const changed = [
      ...(renamed ? ["name"] : []),
      ...(urlChanged ? ["url"] : []),
      ...(input.headers !== undefined ? ["headers"] : []),
      ...(agentIds !== null ? ["agents"] : []),
      ...(input.status !== undefined && input.status !== before.status ? ["status"] : []),
    ];
    if (changed.length === 0) return;
    const now = Date.now();
    const headerNames = input.headers ? Object.keys(input.headers) : before.headerNames;
    const agentWrites: Statement[] =
      agentIds === null
        ? []
        : [
            statement("delete from mcp_gateway_agents where gateway_id = ?", gatewayId),
            ...agentIds.map((agentId) =>
              guard(
                "exists (select 1 from agent_keys where id = ? and revoked_at is null)",
                agentId,
              ),
            ),
            ...(agentIds.length
              ? [
                  insertRows(
                    mcpGatewayAgents,
                    agentIds.map((agentKeyId) => ({ gatewayId, agentKeyId })),
                  ),
                ]
              : []),
          ];
    await commit([
      ...stillAdmin(manager),
      ...(renamed
        ? [guard("not exists (select 1 from mcp_gateways where name = ?)", input.name!)]
        : []),
      updateRow(
        mcpGateways,
        {
          ...(renamed ? { name: input.name } : {}),
          ...(urlChanged ? { url: input.url } : {}),
          ...(input.headers ? { headers: sealHeaders(gatewayId, input.headers), headerNames } : {}),
          ...(input.status ? { status: input.status } : {}),
          revision: before.revision + 1,
          updatedAt: now,
        },
        "id = ? and revision = ?",
        gatewayId,
        before.revision,
      ),
      changedRow(),
      ...agentWrites,
      eventRows({
        type: "mcp_gateway.updated",
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: {
          gatewayId,
          name: renamed ? input.name : before.name,
          changed,
          ...(renamed ? { previousName: before.name } : {}),
          ...(urlChanged ? { url: input.url, previousUrl: before.url } : {}),
          ...(input.headers ? { headerNames } : {}),
          ...(agentIds !== null ? { agentIds } : {}),
          ...(changed.includes("status") ? { status: input.status } : {}),
        },
      }),
    ]);
  });
  // its sessions here end now, not at their next request (not awaited: ending drains them)
  void endGatewaySessions(gatewayId);
  return gatewayView(db, gatewayId);
}
