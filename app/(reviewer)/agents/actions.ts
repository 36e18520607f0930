"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import type { AgentKeyView } from "@/lib/agents/agent-keys";
import { createAgentKey, type CreatedAgentKey } from "@/lib/agents/create-agent-key";
import { revokeAgentKey } from "@/lib/agents/revoke-agent-key";
import { rotateAgentKey } from "@/lib/agents/rotate-agent-key";
import { parseInput } from "@/lib/api/parse";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like the API routes: each authenticates from the session; the verbs check who
// may manage which key (admins every key, leads those of their queues) and validate the input.

const Id = z.string().min(1).max(200);

/** A new key: the answer carries its secret, shown once. */
export async function createAgentKeyAction(input: unknown): Promise<ActionResult<CreatedAgentKey>> {
  try {
    return { ok: true, ...(await createAgentKey(await actionReviewer(), input)) };
  } catch (error) {
    return actionError(error);
  }
}

export async function rotateAgentKeyAction(
  agentId: string,
  input: unknown,
): Promise<ActionResult<{ agent: AgentKeyView; key: string }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, agentId);
    return { ok: true, ...(await rotateAgentKey(reviewer, agentId, input)) };
  } catch (error) {
    return actionError(error);
  }
}

export async function revokeAgentKeyAction(
  agentId: string,
): Promise<ActionResult<{ agent: AgentKeyView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, agentId);
    return { ok: true, agent: await revokeAgentKey(reviewer, agentId) };
  } catch (error) {
    return actionError(error);
  }
}
