import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { closeDb, databaseUrl, databaseUrlForDisplay } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { ApiError } from "@/lib/errors";
import { databaseFile, databaseNotice, newDatabaseWarning, table, UsageError } from "./cli-support";
import { POLICY_OPTIONS, POLICY_USAGE, runPolicyCommand } from "./policy-commands";
import { addMember } from "@/lib/queues/add-member";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { changeRole } from "@/lib/queues/change-role";
import { createQueue } from "@/lib/queues/create-queue";
import { listQueues } from "@/lib/queues/list-queues";
import { OPERATOR } from "@/lib/queues/queue-access";
import { createRule } from "@/lib/routing/create-rule";
import { deleteRule } from "@/lib/routing/delete-rule";
import { listRules, type RoutingRuleView } from "@/lib/routing/list-rules";
import type { QueueView } from "@/lib/queues/queue-views";
import { removeMember } from "@/lib/queues/remove-member";
import { updateQueue } from "@/lib/queues/update-queue";
import { createReviewer, queueIdByName, userIdByEmail } from "./admin-verbs";
import { AGENT_CLI_USAGE, runAgentCommand, runTokenCommand } from "./credential-commands";
import { PEOPLE_CLI_USAGE, runPeopleCommand } from "./people-commands";
import { AUDIT_CLI_USAGE, runAuditCommand, VerificationFailed } from "./audit-commands";
import { backupDatabase, restoreDatabase } from "./backup";
import { configReport } from "@/lib/http/check-config";
import { loadEnvFiles } from "@/lib/config/load-env";

// The same .env files as the server, before anything reads a setting (USAGE names the database),
// so the CLI works on the server's database (lib/config/load-env.ts).
const urlSource = loadEnvFiles();

const USAGE = `Usage: npm run admin -- <command>

  queue create <name> [--required-approvals N] [--separation-of-duties] [--default-timeout SECS]
               [--escalation-queue NAME] [--claim-mode mark|lock]
               [--approve-on-timeout] [--approve-on-timeout-min-secs SECS]
  queue edit <name> [--name NEW] [--required-approvals N] [--separation-of-duties|--no-separation-of-duties]
               [--default-timeout SECS] [--escalation-queue NAME|--no-escalation-queue]
               [--claim-mode mark|lock] [--approve-on-timeout|--no-approve-on-timeout]
               [--approve-on-timeout-min-secs SECS] [--slack-channel ID|--no-slack-channel]
  queue archive <name>
  queue list
  member add --queue NAME --email E [--role R]
  member role --queue NAME --email E --role R
  member remove --queue NAME --email E
  route add --name N --queue NAME [--agent NAME] [--tool GLOB] [--min-cost X] [--position N]
  route list
  route remove --name N
  reviewer create --email E --name N --password P [--queue NAME[:role]]...   (roles: reviewer, lead, admin)
${PEOPLE_CLI_USAGE}
${AGENT_CLI_USAGE}
${POLICY_USAGE}
  backup <file>     a consistent copy of the embedded database, taken while the server runs
  restore <file>    replace the embedded database with a backup (stop the server first)
${AUDIT_CLI_USAGE}

Works on DATABASE_URL (now ${databaseUrlForDisplay()}), from the environment or .env as the server reads it.`;

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number, not '${value}'.`);
  return Number(value);
}

function oneQueue(values: string[] | undefined, command: string): string {
  if (values?.length !== 1) throw new UsageError(`${command} needs one --queue NAME.`);
  return values[0]!;
}

function needEmail(email: string | undefined, command: string): string {
  if (!email) throw new UsageError(`${command} needs --email.`);
  return email;
}

/** `--flag` / `--no-flag`: true, false, or undefined when neither was given. */
function toggle(on: boolean | undefined, off: boolean | undefined, flag: string) {
  if (on && off) throw new UsageError(`Give --${flag} or --no-${flag}, not both.`);
  return on ? true : off ? false : undefined;
}

/** `--slack-channel ID` / `--no-slack-channel`: the channel, null (none), or unchanged. */
function slackChannel(channel: string | undefined, none: boolean | undefined) {
  if (channel && none)
    throw new UsageError("Give --slack-channel or --no-slack-channel, not both.");
  return channel ?? (none ? null : undefined);
}

function queueTable(rows: QueueView[]): string {
  return table([
    [
      "NAME",
      "QUORUM",
      "SOD",
      "CLAIMS",
      "TIMEOUT",
      "APPROVE ON TIMEOUT",
      "ESCALATION",
      "SLACK",
      "MEMBERS",
      "STATUS",
      "ID",
    ],
    ...rows.map((q) => [
      q.name,
      String(q.requiredApprovals),
      q.separationOfDuties ? "yes" : "no",
      q.claimMode,
      `${q.defaultTimeoutSecs}s`,
      q.approveOnTimeout ? `after ${q.approveOnTimeoutMinSecs}s` : "no",
      q.escalationQueue?.name ?? "-",
      q.slackChannelId ?? "-",
      String(q.memberCount),
      q.archivedAt ? "archived" : "open",
      q.id,
    ]),
  ]);
}

function ruleTable(rows: RoutingRuleView[]): string {
  return table([
    ["POSITION", "NAME", "QUEUE", "AGENT", "TOOL", "MIN COST", "ENABLED"],
    ...rows.map((r) => [
      String(r.position),
      r.name,
      r.queue.name,
      r.agent?.name ?? "any",
      r.toolPattern ?? "any",
      r.minCost === null ? "-" : String(r.minCost),
      r.enabled ? "yes" : "no",
    ]),
  ]);
}

async function run(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "required-approvals": { type: "string" },
      "separation-of-duties": { type: "boolean" },
      "no-separation-of-duties": { type: "boolean" },
      "default-timeout-secs": { type: "string" },
      "default-timeout": { type: "string" },
      "escalation-queue": { type: "string" },
      "no-escalation-queue": { type: "boolean" },
      "slack-channel": { type: "string" },
      "no-slack-channel": { type: "boolean" },
      "claim-mode": { type: "string" },
      "approve-on-timeout": { type: "boolean" },
      "no-approve-on-timeout": { type: "boolean" },
      "approve-on-timeout-min-secs": { type: "string" },
      role: { type: "string" },
      email: { type: "string" },
      name: { type: "string" },
      password: { type: "string" },
      queue: { type: "string", multiple: true },
      owner: { type: "string" },
      agent: { type: "string" },
      tool: { type: "string" },
      "min-cost": { type: "string" },
      position: { type: "string" },
      prefix: { type: "string" },
      grace: { type: "string" },
      "public-key": { type: "string" },
      anchor: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
      ...POLICY_OPTIONS,
    },
  });
  const [noun, verb, ...rest] = positionals;
  if (values.help || !noun) return USAGE;
  const problems = configReport();
  if (problems)
    throw new Error(problems.replace("Countersign cannot start", "npm run admin cannot run"));
  // Before migrating: a backup copies the database as it is, a restore replaces it whole.
  if (noun === "backup" || noun === "restore") {
    const file = verb;
    if (!file || rest.length > 0) throw new UsageError(`${noun} takes one file.`);
    console.error(databaseNotice(databaseUrlForDisplay(), urlSource));
    return noun === "backup" ? backupDatabase(file) : restoreDatabase(file);
  }
  // verify-export checks a file alone: no database is opened, so none is named
  if (!(noun === "audit" && verb === "verify-export"))
    console.error(databaseNotice(databaseUrlForDisplay(), urlSource));
  // Read-only, and before migrating: a check must not change what it checks.
  if (noun === "audit") return runAuditCommand(verb, rest, values);
  const file = databaseFile(databaseUrl());
  const created = file !== null && !existsSync(file);
  await migrateDatabase();
  if (created) console.error(newDatabaseWarning(file));

  switch (`${noun} ${verb}`) {
    case "queue create": {
      if (rest.length !== 1) throw new UsageError("queue create takes one name.");
      const escalation = values["escalation-queue"];
      const queue = await createQueue(OPERATOR, {
        name: rest[0]!,
        requiredApprovals: integer(values["required-approvals"], "--required-approvals"),
        separationOfDuties: values["separation-of-duties"] ?? false,
        defaultTimeoutSecs: integer(
          values["default-timeout"] ?? values["default-timeout-secs"],
          "--default-timeout",
        ),
        escalationQueueId: escalation ? await queueIdByName(escalation) : undefined,
        claimMode: values["claim-mode"],
        approveOnTimeout: values["approve-on-timeout"] ?? false,
        approveOnTimeoutMinSecs: integer(
          values["approve-on-timeout-min-secs"],
          "--approve-on-timeout-min-secs",
        ),
      });
      return queue.id;
    }
    case "queue edit": {
      if (rest.length !== 1) throw new UsageError("queue edit takes one name.");
      const escalation = values["escalation-queue"];
      if (escalation && values["no-escalation-queue"])
        throw new UsageError("Give --escalation-queue or --no-escalation-queue, not both.");
      const queue = await updateQueue(OPERATOR, await queueIdByName(rest[0]!), {
        name: values.name,
        requiredApprovals: integer(values["required-approvals"], "--required-approvals"),
        separationOfDuties: toggle(
          values["separation-of-duties"],
          values["no-separation-of-duties"],
          "separation-of-duties",
        ),
        defaultTimeoutSecs: integer(
          values["default-timeout"] ?? values["default-timeout-secs"],
          "--default-timeout",
        ),
        escalationQueueId: escalation
          ? await queueIdByName(escalation)
          : values["no-escalation-queue"]
            ? null
            : undefined,
        claimMode: values["claim-mode"],
        approveOnTimeout: toggle(
          values["approve-on-timeout"],
          values["no-approve-on-timeout"],
          "approve-on-timeout",
        ),
        approveOnTimeoutMinSecs: integer(
          values["approve-on-timeout-min-secs"],
          "--approve-on-timeout-min-secs",
        ),
        slackChannelId: slackChannel(values["slack-channel"], values["no-slack-channel"]),
      });
      return queueTable([queue]);
    }
    case "queue archive": {
      if (rest.length !== 1) throw new UsageError("queue archive takes one name.");
      const queue = await archiveQueue(OPERATOR, await queueIdByName(rest[0]!));
      return `Archived '${queue.name}'.`;
    }
    case "queue list":
      return queueTable((await listQueues(OPERATOR)).queues);
    case "member add": {
      const queueName = oneQueue(values.queue, "member add");
      const member = await addMember(OPERATOR, await queueIdByName(queueName), {
        email: needEmail(values.email, "member add"),
        role: values.role,
      });
      return `Added ${member.email} to '${queueName}' as ${member.role}.`;
    }
    case "member role": {
      const queueName = oneQueue(values.queue, "member role");
      if (!values.role) throw new UsageError("member role needs --role.");
      const member = await changeRole(
        OPERATOR,
        await queueIdByName(queueName),
        await userIdByEmail(needEmail(values.email, "member role")),
        { role: values.role },
      );
      return `${member.email} is now ${member.role} in '${queueName}'.`;
    }
    case "member remove": {
      const queueName = oneQueue(values.queue, "member remove");
      const member = await removeMember(
        OPERATOR,
        await queueIdByName(queueName),
        await userIdByEmail(needEmail(values.email, "member remove")),
      );
      return `Removed ${member.email} from '${queueName}'.`;
    }
    case "route add": {
      const rule = await createRule(OPERATOR, {
        name: values.name ?? "",
        queue: oneQueue(values.queue, "route add"),
        agent: values.agent,
        toolPattern: values.tool,
        minCost: values["min-cost"] === undefined ? undefined : Number(values["min-cost"]),
        position: integer(values.position, "--position"),
      });
      return ruleTable([rule]);
    }
    case "route list":
      return ruleTable(await listRules(OPERATOR));
    case "route remove": {
      if (!values.name) throw new UsageError("route remove needs --name.");
      const rule = (await listRules(OPERATOR)).find((r) => r.name === values.name);
      if (!rule) throw new UsageError(`No routing rule is named '${values.name}'.`);
      await deleteRule(OPERATOR, rule.id);
      return `Removed routing rule '${rule.name}'.`;
    }
    case "reviewer create": {
      const reviewer = await createReviewer({
        email: values.email ?? "",
        name: values.name ?? "",
        password: values.password ?? "",
        queues: (values.queue ?? []).map((spec) => {
          const [name, role = "reviewer"] = spec.split(":");
          return { name: name!, role: role as "reviewer" };
        }),
      });
      return reviewer.id;
    }
    case "reviewer token":
      return runTokenCommand(rest, values);
    case "reviewer list":
    case "reviewer invite":
    case "reviewer rename":
    case "reviewer deactivate":
    case "reviewer reactivate":
    case "reviewer reset-password":
      return runPeopleCommand(verb!, values);
    case "agent create":
    case "agent revoke":
    case "agent rotate":
      return runAgentCommand(verb!, values);
    default: {
      const output = await runPolicyCommand(`${noun} ${verb}`, values);
      if (output !== null) return output;
      throw new UsageError(`Unknown command '${[noun, verb].filter(Boolean).join(" ")}'.`);
    }
  }
}

run(process.argv.slice(2))
  .then((output) => {
    console.log(output);
    closeDb();
  })
  .catch((error) => {
    if (error instanceof VerificationFailed) console.error(error.message);
    else if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
    else if (error instanceof ApiError) {
      const issues = (error.extra.issues as { path: string; message: string }[] | undefined) ?? [];
      console.error(
        [error.message, ...issues.slice(1).map((i) => `  ${i.path}: ${i.message}`)].join("\n"),
      );
    } else console.error(error instanceof Error ? error.message : error);
    closeDb();
    process.exit(error instanceof VerificationFailed ? error.exitCode : 1);
  });
