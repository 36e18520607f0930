import { listAgentKeys, setAgentMode } from "@/lib/agents/agent-keys";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { deletePolicyRule } from "@/lib/policies/delete-policy-rule";
import { listPolicyRules, type PolicyRuleView } from "@/lib/policies/list-policy-rules";
import { tryPolicy } from "@/lib/policies/try-policy";
import { updatePolicyRule } from "@/lib/policies/update-policy-rule";
import { OPERATOR } from "@/lib/queues/queue-access";
import { queueIdByName } from "./admin-verbs";
import { table, UsageError } from "./cli-support";

// `npm run admin -- policy …` and `agent mode|list`: the policy verbs for the operator.

export const POLICY_USAGE = `  policy add --name N --effect allow|ask|deny [--queue NAME] [--agent NAME] [--tool GLOB]
             [--arg "PATH equals|prefix|glob|atMost VALUE"]... [--cost-above X] [--reason TEXT]
             (no --queue: the rule applies in every queue)
  policy list [--queue NAME]
  policy enable|disable|remove --name N [--queue NAME]
  policy try --queue NAME --tool T [--args JSON] [--cost X] [--agent NAME]
  agent list
  agent mode --name N --mode ask|allow|deny|off`;

export const POLICY_OPTIONS = {
  effect: { type: "string" },
  arg: { type: "string", multiple: true },
  args: { type: "string" },
  "cost-above": { type: "string" },
  cost: { type: "string" },
  reason: { type: "string" },
  mode: { type: "string" },
} as const;

type Values = {
  name?: string;
  queue?: string[];
  agent?: string;
  tool?: string;
  effect?: string;
  arg?: string[];
  args?: string;
  "cost-above"?: string;
  cost?: string;
  reason?: string;
  mode?: string;
};

/** The command's output, or null when `command` is not one of these. */
export async function runPolicyCommand(command: string, values: Values): Promise<string | null> {
  switch (command) {
    case "policy add": {
      const rule = await createPolicyRule(OPERATOR, {
        name: values.name ?? "",
        effect: values.effect ?? "",
        queue: optionalQueue(values.queue),
        agent: values.agent,
        toolPattern: values.tool,
        argPredicates: (values.arg ?? []).map(parsePredicate),
        costAbove: number(values["cost-above"], "--cost-above"),
        reason: values.reason,
      });
      return policyTable([rule]);
    }
    case "policy list": {
      const queue = optionalQueue(values.queue);
      const queueId = queue ? await queueIdByName(queue) : undefined;
      return policyTable(await listPolicyRules(OPERATOR, { queueId }));
    }
    case "policy enable":
    case "policy disable": {
      const rule = await namedRule(values);
      await updatePolicyRule(OPERATOR, rule.id, { enabled: command === "policy enable" });
      return `Policy rule '${rule.name}' is ${command === "policy enable" ? "on" : "off"}.`;
    }
    case "policy remove": {
      const rule = await namedRule(values);
      await deletePolicyRule(OPERATOR, rule.id);
      return `Removed policy rule '${rule.name}'.`;
    }
    case "policy try": {
      const trial = await tryPolicy(OPERATOR, {
        queue: optionalQueue(values.queue) ?? "",
        agent: values.agent,
        call: {
          toolName: values.tool ?? "",
          args: json(values.args ?? "{}", "--args"),
          costEstimate: number(values.cost, "--cost"),
        },
      });
      return [
        `${trial.outcome.toUpperCase()}: ${trial.explanation}`,
        ...trial.checks.map(
          (check) =>
            `  ${check.matched ? "✓" : "·"} ${check.rule.effect.padEnd(5)} ${check.rule.name}: ${
              check.conditions
                .map((c) => `${c.held ? "" : "not "}${c.condition}${c.held ? "" : ` (${c.why})`}`)
                .join(", ") || "every call"
            }`,
        ),
      ].join("\n");
    }
    case "agent list":
      return table([
        ["NAME", "MODE", "DEFAULT QUEUE", "OWNER", "KEY", "LAST USED", "STATUS", "ID"],
        ...(await listAgentKeys(OPERATOR)).map((a) => [
          a.name,
          a.mode,
          a.defaultQueue.name,
          a.owner?.name ?? "-",
          `${a.keyPrefix}…`,
          a.lastUsedAt ?? "-",
          a.revokedAt
            ? "revoked"
            : a.previousKeyExpiresAt
              ? `rotated (old key until ${a.previousKeyExpiresAt})`
              : "active",
          a.id,
        ]),
      ]);
    case "agent mode": {
      if (!values.name) throw new UsageError("agent mode needs --name.");
      // by id, or a name only one key (or one unrevoked key) has
      const matches = (await listAgentKeys(OPERATOR)).filter(
        (a) => a.name === values.name || a.id === values.name,
      );
      const byId = matches.find((a) => a.id === values.name);
      const active = matches.filter((a) => !a.revokedAt);
      const match =
        byId ?? (matches.length === 1 ? matches[0] : active.length === 1 ? active[0] : undefined);
      if (!match)
        throw new UsageError(
          matches.length
            ? `Several agent keys are named '${values.name}'; give the key's id (npm run admin -- agent list).`
            : `No agent key is named '${values.name}'.`,
        );
      const agent = await setAgentMode(OPERATOR, match.id, { mode: values.mode ?? "" });
      return `Agent '${agent.name}' is now in mode ${agent.mode}.`;
    }
    default:
      return null;
  }
}

function optionalQueue(queues: string[] | undefined): string | undefined {
  if (queues && queues.length > 1) throw new UsageError("Give at most one --queue.");
  return queues?.[0];
}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === "" || Number.isNaN(parsed))
    throw new UsageError(`${flag} takes a number, not '${value}'.`);
  return parsed;
}

function json(text: string, flag: string): Record<string, unknown> {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${flag} takes a JSON object, like '{"path":"/tmp/x"}'.`);
  }
}

/** "path prefix /scratch/" → { path, op, value }; an equals value is JSON when it parses. */
function parsePredicate(spec: string) {
  const match = /^(\S+)\s+(equals|prefix|glob|atMost)\s+([\s\S]*)$/.exec(spec.trim());
  if (!match)
    throw new UsageError(`--arg takes "PATH equals|prefix|glob|atMost VALUE", not '${spec}'.`);
  const [, path, op, raw] = match;
  let value: unknown = raw;
  if (op === "atMost") value = Number(raw);
  if (op === "equals") {
    try {
      value = JSON.parse(raw!);
    } catch {
      // a bare word: the string itself
    }
  }
  return { path, op, value };
}

async function namedRule(values: Values): Promise<PolicyRuleView> {
  if (!values.name) throw new UsageError("Name the rule with --name.");
  const queue = optionalQueue(values.queue);
  const queueId = queue ? await queueIdByName(queue) : null;
  const rule = (await listPolicyRules(OPERATOR)).find(
    (r) => r.name === values.name && (r.queue?.id ?? null) === queueId,
  );
  if (!rule)
    throw new UsageError(
      `No policy rule is named '${values.name}' ${queue ? `in queue '${queue}'` : "among the global rules"}.`,
    );
  return rule;
}

function policyTable(rows: PolicyRuleView[]): string {
  return table([
    ["EFFECT", "NAME", "QUEUE", "WHEN", "ON", "ID"],
    ...rows.map((r) => [
      r.effect,
      r.name,
      r.queue?.name ?? "(every queue)",
      r.conditions,
      r.enabled ? "yes" : "no",
      r.id,
    ]),
  ]);
}
