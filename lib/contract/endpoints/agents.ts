import { CreateAgentKeyInput, createAgentKey } from "@/lib/agents/create-agent-key";
import { listAgentKeys, AgentModeInput, setAgentMode } from "@/lib/agents/agent-keys";
import { json } from "@/lib/http/api-route";
import { RotateAgentKeyInput, rotateAgentKey } from "@/lib/agents/rotate-agent-key";
import { revokeAgentKey } from "@/lib/agents/revoke-agent-key";
import { defineEndpoint } from "../endpoint";

export const agentEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/agents",
    auth: "reviewer",
    operationId: "listAgentKeys",
    tag: "Agents",
    summary:
      "Agent keys, their modes and last use: all of them for admins, those whose default queue they lead for leads",
    ok: { status: 200, schema: "AgentKeyList" },
    errors: [401, 403],
    handler: async ({ actor }) => json({ agents: await listAgentKeys(actor) }),
  }),
  defineEndpoint({
    method: "POST",
    path: "/agents",
    auth: "session",
    signedIn: "Agent keys are created",
    operationId: "createAgentKey",
    tag: "Agents",
    summary: "Create an agent key (admins; leads within the queues they lead)",
    description:
      "defaultQueue and queues are queue ids; every one must be open and managed by the caller (400 otherwise). The secret `key` is in this answer only: only its hash is kept. From a signed-in session only (a key or token is 403). Writes an agent.created event.",
    body: CreateAgentKeyInput,
    ok: { status: 201, schema: "CreatedAgentKey" },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ actor, body }) => json(await createAgentKey(actor, body), 201),
  }),
  defineEndpoint({
    method: "POST",
    path: "/agents/{agentId}/rotate",
    auth: "session",
    signedIn: "Agent keys are rotated",
    operationId: "rotateAgentKey",
    tag: "Agents",
    summary: "Give an agent key a new secret; the old one keeps working for graceSecs",
    description:
      "graceSecs defaults to 86400 (24 h); 0 stops the old secret at once. A secret still in the grace of an earlier rotation stops at once. The new secret is in this answer only. From a signed-in session only (a key or token is 403). A revoked key is 409 key_revoked. Writes an agent.rotated event.",
    body: RotateAgentKeyInput,
    ok: { status: 200, schema: "RotatedAgentKey" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ actor, params, body }) =>
      json(await rotateAgentKey(actor, params.agentId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/agents/{agentId}/revoke",
    auth: "reviewer",
    operationId: "revokeAgentKey",
    tag: "Agents",
    summary: "Revoke an agent key at once",
    description:
      "Its next request is 401, and its open streams and long-polls end within seconds. Revoking a revoked key answers it unchanged. Writes an agent.revoked event.",
    ok: { status: 200, schema: "RevokedAgentKey" },
    errors: [401, 403, 404],
    handler: async ({ actor, params }) =>
      json({ agent: await revokeAgentKey(actor, params.agentId) }),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/agents/{agentId}",
    auth: "reviewer",
    operationId: "setAgentMode",
    tag: "Agents",
    summary:
      "Set an agent's mode (admins): ask (rules apply), allow (approve all a rule does not block), deny (reject all that would need a reviewer), off (no gate: approve everything, still logged)",
    body: AgentModeInput,
    ok: { status: 200, schema: "AgentKey" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ actor, params, body }) =>
      json(await setAgentMode(actor, params.agentId, body)),
  }),
];
