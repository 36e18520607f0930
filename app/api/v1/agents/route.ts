import { listAgentKeys } from "@/lib/agents/agent-keys";
import { createAgentKey } from "@/lib/agents/create-agent-key";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json({ agents: await listAgentKeys(actor) }));

export const POST = apiRoute(async ({ actor, body }) =>
  json(await createAgentKey(actor, body), 201),
);

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
