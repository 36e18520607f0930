"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { createAgentKey } from "@/lib/agents/create-agent-key";
import { revokeAgentKey } from "@/lib/agents/revoke-agent-key";
import { rotateAgentKey } from "@/lib/agents/rotate-agent-key";
import { Id } from "@/lib/ids";

// Public endpoints like the API routes: each authenticates from the session; the verbs check who
// may manage which key (admins every key, leads those of their queues) and validate the input.

/** A new key: the answer carries its secret, shown once. */
export const createAgentKeyAction = reviewerAction([z.unknown()], (reviewer, [input]) =>
  createAgentKey(reviewer, input),
);

export const rotateAgentKeyAction = reviewerAction(
  [Id, z.unknown()],
  (reviewer, [agentId, input]) => rotateAgentKey(reviewer, agentId, input),
);

export const revokeAgentKeyAction = reviewerAction([Id], async (reviewer, [agentId]) => ({
  agent: await revokeAgentKey(reviewer, agentId),
}));
