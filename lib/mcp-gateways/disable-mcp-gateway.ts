import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { mcpGateways } from "@/db/schema";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, requireAdmin, stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { gatewayView, type McpGatewayView } from "./gateway-record";
import { endGatewaySessions } from "./hosted-sessions";

/**
 * `POST /mcp-gateways/{id}/disable` (admins): agents can no longer connect, and sessions open on
 * it end at their next request. Disabling a disabled gateway answers it unchanged. Its settings
 * stay (PATCH with `status: "enabled"` turns it back on). One write batch with an
 * `mcp_gateway.disabled` event.
 */
export async function disableMcpGateway(
  caller: QueueCaller,
  gatewayId: string,
): Promise<McpGatewayView> {
  const db = getDb();
  const manager = await managerOf(db, caller);
  requireAdmin(manager, "disable MCP gateways");
  await untilWritten(async () => {
    const [before] = await db.select().from(mcpGateways).where(eq(mcpGateways.id, gatewayId));
    if (!before) throw new NotFoundError("MCP gateway");
    if (before.status === "disabled") return;
    const now = Date.now();
    await commit([
      ...stillAdmin(manager),
      updateRow(
        mcpGateways,
        { status: "disabled", revision: before.revision + 1, updatedAt: now },
        "id = ? and revision = ?",
        gatewayId,
        before.revision,
      ),
      changedRow(),
      eventRows({
        type: "mcp_gateway.disabled",
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: { gatewayId, name: before.name },
      }),
    ]);
  });
  // its sessions here end now, not at their next request (not awaited: ending drains them)
  void endGatewaySessions(gatewayId);
  return gatewayView(db, gatewayId);
}
