import { setAgentMode } from "@/lib/agents/agent-keys";
import { apiRoute, json } from "@/lib/http/api-route";

export const dynamic = "force-dynamic";

export const PATCH = apiRoute<{ agentId: string }>(async ({ actor, params, body }) =>
  json(await setAgentMode(actor, params.agentId, body)),
);
