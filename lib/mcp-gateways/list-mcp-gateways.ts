import { getDb } from "@/db/client";
import { requireReviewer } from "@/lib/auth/actor";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { gatewayViews, type McpGatewayView } from "./gateway-record";

/**
 * `GET /mcp-gateways`: every hosted gateway, for any reviewer (what to tell an agent's config:
 * the endpoint, and which agent keys may use it). Header values are never part of it.
 */
export async function listMcpGateways(caller: QueueCaller): Promise<McpGatewayView[]> {
  if (caller.kind !== "operator") requireReviewer(caller);
  return gatewayViews(getDb());
}
