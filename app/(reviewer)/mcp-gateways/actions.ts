"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { Id } from "@/lib/ids";
import { createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import { disableMcpGateway } from "@/lib/mcp-gateways/disable-mcp-gateway";
import { editMcpGateway } from "@/lib/mcp-gateways/edit-mcp-gateway";

// Public endpoints like the API routes: each authenticates from the session; the verbs check that
// the caller is an admin and validate the input (the upstream URL's SSRF check included).

export const createMcpGatewayAction = reviewerAction([z.unknown()], async (reviewer, [input]) => ({
  gateway: await createMcpGateway(reviewer, input),
}));

export const editMcpGatewayAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [gatewayId, input]) => ({
    gateway: await editMcpGateway(reviewer, gatewayId, input),
  }),
);

export const disableMcpGatewayAction = reviewerAction([Id], async (reviewer, [gatewayId]) => ({
  gateway: await disableMcpGateway(reviewer, gatewayId),
}));
