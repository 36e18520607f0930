import { rotateAgentKey } from "@/lib/agents/rotate-agent-key";
import { requireSignedIn } from "@/lib/auth/require-session";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ agentId: string }>(async ({ actor, params, body, credential }) => {
  requireSignedIn(credential, "Agent keys are rotated");
  return json(await rotateAgentKey(actor, params.agentId, body));
});

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
