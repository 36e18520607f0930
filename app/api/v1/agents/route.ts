import { listAgentKeys } from "@/lib/agents/agent-keys";
import { apiRoute, json } from "@/lib/http/api-route";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json({ agents: await listAgentKeys(actor) }));
