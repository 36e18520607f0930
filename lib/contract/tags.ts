// The OpenAPI document's tags: operations are grouped by these, in this order, in the document
// and in generated clients. Each endpoint names one (lib/contract/endpoint.ts).

export const TAGS = {
  Runs: "An agent's runs: start one, read it, claim it once approved, report tool results, complete it, roll it back.",
  Batches: "Pauses: the tool calls (or the plan) an agent asks permission for.",
  Reviews: "Reviewers' pending work and their decisions on calls and batches.",
  History: "Settled batches, filtered, and their export.",
  Streams: "Server-sent events of a run or of the reviewer's queues.",
  Queues: "Queues, their settings and their members.",
  Routing: "Rules that choose the queue of a batch that names none.",
  Policies: "Rules (and agent modes) that settle calls before a reviewer sees them.",
  Agents: "Agent keys: create, rotate, revoke, and set their mode.",
  Access: "Reviewers' personal tokens and sessions.",
  People: "Reviewers' accounts: invite, rename, deactivate, reset a password.",
  Audit: "The trust changes in the event log.",
  Insights: "How queues are doing over a period, for their leads and admins.",
  Views: "Saved queue filters, shared with a queue's members.",
  Notifications: "A reviewer's own notification preferences (email), per queue.",
  SingleSignOn:
    "Sign-in with the company's OpenID Connect identity provider (admins configure it).",
  Me: "The caller's own settings: the time zone times are shown in.",
  McpGateways:
    "Hosted MCP gateways: upstream MCP servers Countersign serves at /api/mcp/gateways/{name} to the agent keys allowed on them, every tools/call gated (admins manage them).",
};

export type Tag = keyof typeof TAGS;
