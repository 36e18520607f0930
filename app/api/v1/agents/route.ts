import { listAgentKeys } from "@/lib/agents/agent-keys";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json({ agents: await listAgentKeys(actor) }));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
