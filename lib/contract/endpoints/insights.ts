import { InsightsQuery, queryInsights } from "@/lib/insights/insights-query";
import { json } from "@/lib/http/api-route";
import { defineEndpoint } from "../endpoint";

export const insightEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/insights",
    auth: "reviewer",
    operationId: "getInsights",
    tag: "Insights",
    summary:
      "Cards created and settled, time to decision, decisions by source, tool and agent, deadlines missed, escalations and reviewers' votes over a period (leads: their queues; admins: every queue)",
    description:
      "One queue (`queue`) or all the caller may see together. Decisions are those of the cards settled in the period. A reviewer who leads no queue gets 403; a queue the caller does not lead, 404. A period may cover at most 366 days.",
    query: InsightsQuery,
    ok: { status: 200, schema: "Insights" },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => json(await queryInsights(actor, query)),
  }),
];
