import { listAgentKeys } from "@/lib/agents/agent-keys";
import { createAgentKey } from "@/lib/agents/create-agent-key";
import { requireSignedIn } from "@/lib/auth/require-session";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json({ agents: await listAgentKeys(actor) }));

export const POST = apiRoute(async ({ actor, body, credential }) => {
  requireSignedIn(credential, "Agent keys are created");
  return json(await createAgentKey(actor, body), 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
