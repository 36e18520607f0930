import { createAgentKey } from "@/lib/agents/create-agent-key";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { revokeAgentKey } from "@/lib/agents/revoke-agent-key";
import { rotateAgentKey } from "@/lib/agents/rotate-agent-key";
import { getDb } from "@/db/client";
import { createReviewerToken } from "@/lib/reviewer-tokens/create-reviewer-token";
import { listReviewerTokens } from "@/lib/reviewer-tokens/reviewer-tokens";
import { revokeReviewerToken } from "@/lib/reviewer-tokens/revoke-reviewer-token";
import { OPERATOR } from "@/lib/queues/queue-access";
import { queueIdByName, userIdByEmail } from "./admin-verbs";
import { table, UsageError } from "./cli-support";

// `npm run admin -- agent create|revoke|rotate` and `reviewer token [list|revoke]`: the same verbs
// as the app and the API, as the operator, each change one write batch with its event.

export const AGENT_CLI_USAGE = `  reviewer token --email E                       (prints a new personal token)
  reviewer token list --email E
  reviewer token revoke --email E [--prefix P]   (every active token of E, or those starting with P)
  agent create --name N --queue NAME [--queue NAME]... [--owner EMAIL]
  agent revoke --name N
  agent rotate --name N [--grace SECS]           (the old key works SECS more; default 86400)`;

type Values = {
  name?: string;
  queue?: string[];
  owner?: string;
  email?: string;
  prefix?: string;
  grace?: string;
};

const time = (iso: string | null) => iso ?? "-";

export async function runAgentCommand(verb: string, values: Values): Promise<string> {
  switch (verb) {
    case "create": {
      const [first, ...more] = values.queue ?? [];
      if (!first)
        throw new UsageError(
          "agent create needs at least one queue: --queue NAME (the first is its default).",
        );
      const created = await createAgentKey(OPERATOR, {
        name: values.name ?? "",
        defaultQueue: await queueIdByName(first),
        queues: await Promise.all(more.map(queueIdByName)),
        ownerEmail: values.owner,
      });
      // The key on the first line (scripts read it); the signing secret after it.
      return `${created.key}\n# webhook signing secret (Standard Webhooks): ${created.webhookSecret}`;
    }
    case "revoke": {
      if (!values.name) throw new UsageError("agent revoke needs --name.");
      const agent = await revokeAgentKey(
        OPERATOR,
        await resolveAgent(getDb(), values.name, "name"),
      );
      return `Revoked the key of '${agent.name}' (${agent.keyPrefix}…) at ${agent.revokedAt}.`;
    }
    case "rotate": {
      if (!values.name) throw new UsageError("agent rotate needs --name.");
      if (values.grace !== undefined && !/^\d+$/.test(values.grace))
        throw new UsageError(`--grace takes a whole number of seconds, not '${values.grace}'.`);
      const rotated = await rotateAgentKey(
        OPERATOR,
        await resolveAgent(getDb(), values.name, "name"),
        values.grace === undefined ? {} : { graceSecs: Number(values.grace) },
      );
      const until = rotated.agent.previousKeyExpiresAt;
      return `${rotated.key}\n# the previous key ${until ? `works until ${until}` : "no longer works"}`;
    }
    default:
      throw new UsageError(`Unknown command 'agent ${verb}'.`);
  }
}

export async function runTokenCommand(rest: string[], values: Values): Promise<string> {
  const [action = "create"] = rest;
  if (!values.email) throw new UsageError(`reviewer token ${action} needs --email.`);
  const userId = await userIdByEmail(values.email);
  switch (action) {
    case "create":
      return (await createReviewerToken(OPERATOR, {}, { id: userId })).token;
    case "list":
      return table([
        ["TOKEN", "CREATED", "LAST USED", "REVOKED", "ID"],
        ...(await listReviewerTokens(OPERATOR, { userId })).map((t) => [
          `${t.tokenPrefix}…`,
          t.createdAt,
          time(t.lastUsedAt),
          time(t.revokedAt),
          t.id,
        ]),
      ]);
    case "revoke": {
      const targets = (await listReviewerTokens(OPERATOR, { userId })).filter(
        (t) => t.revokedAt === null && (!values.prefix || t.tokenPrefix.startsWith(values.prefix)),
      );
      if (targets.length === 0)
        throw new UsageError(
          `${values.email} has no active token${values.prefix ? ` starting with '${values.prefix}'` : ""}.`,
        );
      for (const token of targets) await revokeReviewerToken(OPERATOR, token.id);
      return `Revoked ${targets.length} token${targets.length === 1 ? "" : "s"} of ${values.email}: ${targets.map((t) => `${t.tokenPrefix}…`).join(", ")}`;
    }
    default:
      throw new UsageError(`Unknown command 'reviewer token ${action}'.`);
  }
}
