import { revokeAgentKey } from "@/lib/agents/revoke-agent-key";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ agentId: string }>(async ({ actor, params }) =>
  json({ agent: await revokeAgentKey(actor, params.agentId) }),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
