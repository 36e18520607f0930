import { setAgentMode } from "@/lib/agents/agent-keys";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const PATCH = apiRoute<{ agentId: string }>(async ({ actor, params, body }) =>
  json(await setAgentMode(actor, params.agentId, body)),
);

export const { GET, HEAD, POST, PUT, DELETE, OPTIONS } = refuseOtherMethods("PATCH");
