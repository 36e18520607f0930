import { parseArgs } from "node:util";
import { closeDb, databaseUrl } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { ApiError } from "@/lib/errors";
import { createAgentKey, createQueue, createReviewer, createReviewerToken } from "./admin-verbs";

const USAGE = `Usage: npm run admin -- <command>

  queue create <name> [--required-approvals N] [--separation-of-duties] [--default-timeout-secs S]
  reviewer create --email E --name N --password P [--queue NAME[:role]]...   (roles: reviewer, lead, admin)
  reviewer token --email E
  agent create --name N --queue NAME [--queue NAME]... [--owner EMAIL]

Works on DATABASE_URL (now ${databaseUrl()}).`;

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number, not '${value}'.`);
  return Number(value);
}

class UsageError extends Error {}

async function run(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "required-approvals": { type: "string" },
      "separation-of-duties": { type: "boolean" },
      "default-timeout-secs": { type: "string" },
      email: { type: "string" },
      name: { type: "string" },
      password: { type: "string" },
      queue: { type: "string", multiple: true },
      owner: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [noun, verb, ...rest] = positionals;
  if (values.help || !noun) return USAGE;
  await migrateDatabase();

  switch (`${noun} ${verb}`) {
    case "queue create": {
      if (rest.length !== 1) throw new UsageError("queue create takes one name.");
      const queue = await createQueue({
        name: rest[0]!,
        requiredApprovals: integer(values["required-approvals"], "--required-approvals"),
        separationOfDuties: values["separation-of-duties"] ?? false,
        defaultTimeoutSecs: integer(values["default-timeout-secs"], "--default-timeout-secs"),
      });
      return queue.id;
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
      if (!values.email) throw new UsageError("reviewer token needs --email.");
      return createReviewerToken(values.email);
    case "agent create": {
      const agent = await createAgentKey({
        name: values.name ?? "",
        queues: values.queue ?? [],
        ownerEmail: values.owner,
      });
      // The key on the first line (scripts read it); the signing secret after it.
      return `${agent.key}\n# webhook signing secret (Standard Webhooks): ${agent.webhookSecret}`;
    }
    default:
      throw new UsageError(`Unknown command '${[noun, verb].filter(Boolean).join(" ")}'.`);
  }
}

run(process.argv.slice(2))
  .then((output) => {
    console.log(output);
    closeDb();
  })
  .catch((error) => {
    if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
    else if (error instanceof ApiError) {
      const issues = (error.extra.issues as { path: string; message: string }[] | undefined) ?? [];
      console.error(
        [error.message, ...issues.slice(1).map((i) => `  ${i.path}: ${i.message}`)].join("\n"),
      );
    } else console.error(error instanceof Error ? error.message : error);
    closeDb();
    process.exit(1);
  });
