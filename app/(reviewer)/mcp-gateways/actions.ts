"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import { parseInput } from "@/lib/api/parse";
import { createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import { disableMcpGateway } from "@/lib/mcp-gateways/disable-mcp-gateway";
import { editMcpGateway } from "@/lib/mcp-gateways/edit-mcp-gateway";
import type { McpGatewayView } from "@/lib/mcp-gateways/gateway-record";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like the API routes: each authenticates from the session; the verbs check that
// the caller is an admin and validate the input (the upstream URL's SSRF check included).

const Id = z.string().min(1).max(200);

export async function createMcpGatewayAction(
  input: unknown,
): Promise<ActionResult<{ gateway: McpGatewayView }>> {
  try {
    return { ok: true, gateway: await createMcpGateway(await actionReviewer(), input) };
  } catch (error) {
    return actionError(error);
  }
}

export async function editMcpGatewayAction(
  gatewayId: string,
  input: unknown,
): Promise<ActionResult<{ gateway: McpGatewayView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, gatewayId);
    return { ok: true, gateway: await editMcpGateway(reviewer, gatewayId, input) };
  } catch (error) {
    return actionError(error);
  }
}

export async function disableMcpGatewayAction(
  gatewayId: string,
): Promise<ActionResult<{ gateway: McpGatewayView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, gatewayId);
    return { ok: true, gateway: await disableMcpGateway(reviewer, gatewayId) };
  } catch (error) {
    return actionError(error);
  }
}
