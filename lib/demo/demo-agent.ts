import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { databaseUrl } from "@/db/client";
import { ApiProblem, checkHealth, DemoApiClient, ServerUnreachable } from "./api-client";
import { errorMessage, prefixedLogger } from "./format";
import { runScenario, type ScenarioContext, type ScenarioResult } from "./run-scenario";
import {
  AGENT_NAMES,
  SCENARIO_NAMES,
  SCENARIOS,
  type AgentName,
  type ScenarioName,
} from "./scenarios";
import { setUpDemo, SetupError } from "./setup";
import { loadEnvFiles } from "@/lib/config/load-env";
import { setting } from "@/lib/config/settings";

// The same .env files as the server and the admin CLI: the demo's setup writes agent keys into
// the database the server uses (lib/config/load-env.ts).
loadEnvFiles();

// `npm run demo`: scripted agents (no model) pause runs on the running app over its public API,
// so a newcomer sees cards appear in their queue, decides them, and watches the agents resume.

const DEFAULT_QUEUE = "General";
const DEFAULT_TIMEOUT_SECS = 30 * 60;

const USAGE = `Usage: npm run demo -- [options]

Scripted agents pause on the running Countersign app, wait for your decisions, then resume.
Start the app first (npm start), sign in, then run this and decide the cards in the browser.

Options:
  --url URL            the app (default: COUNTERSIGN_URL, else http://127.0.0.1:\${PORT:-3000})
  --queue NAME         the queue the cards go to (default: ${DEFAULT_QUEUE}; created if missing)
  --scenario NAME      run only this scenario (repeatable): ${SCENARIO_NAMES.join(", ")}
  --timeout SECS       how long a card waits for a decision (default: ${DEFAULT_TIMEOUT_SECS});
                       then its undecided calls are rejected and the agent carries on without them
  -h, --help           this help

Scenarios:
${SCENARIO_NAMES.map((name) => `  ${name.padEnd(8)} ${SCENARIOS[name].title}`).join("\n")}

Setup: the demo creates agent keys ("${AGENT_NAMES.join('", "')}") for the queue, directly in
the app's database (DATABASE_URL, default file:./data/countersign.db); a later run reuses them
(rotating each for a fresh secret; the previous one works an hour more), so each name stays one
key. To skip that, pass an agent key in COUNTERSIGN_AGENT_KEY; every scenario then uses it.

Ctrl+C withdraws the cards still waiting and exits.`;

class UsageError extends Error {}

/** A setting the demo reads, with a bad value reported as a usage mistake. */
function settingOrUsageError(name: "COUNTERSIGN_URL"): string | undefined {
  try {
    return setting(name);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

type Options = {
  baseUrl: string;
  queue: string;
  queueGiven: boolean;
  scenarios: ScenarioName[];
  timeoutSecs: number;
};

function parseOptions(argv: string[]): Options | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        queue: { type: "string" },
        scenario: { type: "string", multiple: true },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
  const { values } = parsed;
  if (values.help) return "help";

  const url =
    values.url ?? settingOrUsageError("COUNTERSIGN_URL") ?? `http://127.0.0.1:${setting("PORT")}`;
  if (!/^https?:\/\/[^/]+/.test(url))
    throw new UsageError(`--url must be an http(s) URL, not '${url}'.`);

  const scenarios = (values.scenario ?? [])
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of scenarios) {
    if (!(SCENARIO_NAMES as readonly string[]).includes(name))
      throw new UsageError(
        `Unknown scenario '${name}' (choose from ${SCENARIO_NAMES.join(", ")}).`,
      );
  }

  let timeoutSecs = DEFAULT_TIMEOUT_SECS;
  if (values.timeout !== undefined) {
    if (!/^\d+$/.test(values.timeout) || Number(values.timeout) < 1)
      throw new UsageError(`--timeout takes a whole number of seconds, not '${values.timeout}'.`);
    timeoutSecs = Number(values.timeout);
  }

  const queue = values.queue?.trim() || DEFAULT_QUEUE;
  return {
    baseUrl: url.replace(/\/+$/, ""),
    queue,
    queueGiven: values.queue !== undefined,
    scenarios: scenarios.length
      ? SCENARIO_NAMES.filter((name) => scenarios.includes(name))
      : [...SCENARIO_NAMES],
    timeoutSecs,
  };
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (options === "help") {
    console.log(USAGE);
    return 0;
  }
  const width = Math.max(4, ...options.scenarios.map((s) => s.length));
  const log = prefixedLogger("demo", width, 4);

  try {
    await checkHealth(options.baseUrl);
  } catch (error) {
    if (error instanceof ServerUnreachable) {
      log.error(
        `Countersign is not answering at ${options.baseUrl} — start it with \`npm start\` first` +
          " (or point the demo elsewhere with --url or COUNTERSIGN_URL).",
      );
    } else {
      log.error(`${options.baseUrl} is not a healthy Countersign: ${errorMessage(error)}`);
    }
    return 1;
  }

  const agents = [...new Set(options.scenarios.map((name) => SCENARIOS[name].agent))];
  const keyFromEnv = setting("COUNTERSIGN_AGENT_KEY")?.trim();
  const keys = new Map<AgentName, string>();
  const queues = new Map<AgentName, string>();
  let unauthenticatedHelp: string;
  if (keyFromEnv) {
    for (const agent of agents) keys.set(agent, keyFromEnv);
    unauthenticatedHelp =
      `Countersign at ${options.baseUrl} refused the agent key in COUNTERSIGN_AGENT_KEY (401): ` +
      "it is unknown there, mistyped or revoked. Create one with " +
      `\`npm run admin -- agent create --name "Demo agent" --queue ${DEFAULT_QUEUE}\` (the cs_agent_… line it prints), ` +
      "or unset COUNTERSIGN_AGENT_KEY to let the demo create its own keys.";
    log.info(
      `using the agent key from COUNTERSIGN_AGENT_KEY for every scenario; ` +
        (options.queueGiven
          ? `cards go to the queue “${options.queue}”`
          : "cards go to its default queue"),
    );
  } else {
    let setup;
    try {
      setup = await setUpDemo(options.queue, agents);
    } catch (error) {
      log.error(
        error instanceof SetupError ? error.message : `setup failed: ${errorMessage(error)}`,
      );
      return 1;
    }
    for (const [agent, key] of setup.keys) {
      keys.set(agent, key.secret);
      if (key.queue) queues.set(agent, key.queue);
    }
    unauthenticatedHelp =
      `Countersign at ${options.baseUrl} refused the agent key the demo just set up in ${databaseUrl()} (401): ` +
      "the app must be running on another database. Run the demo from the project folder with the same " +
      "DATABASE_URL as the app, or pass a key the app knows in COUNTERSIGN_AGENT_KEY.";
    describeSetup(setup, options, log.info);
  }

  const stop = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    log.info("stopping: withdrawing the cards still waiting (Ctrl+C again to quit at once)…");
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const clients = new Map<string, DemoApiClient>();
  const clientFor = (key: string) => {
    if (!clients.has(key)) clients.set(key, new DemoApiClient(options.baseUrl, key));
    return clients.get(key)!;
  };

  // One look with each key before anything is paused: a key the app does not know is then one
  // clear message, not one per scenario.
  for (const key of new Set(keys.values())) {
    const problem = await keyProblem(clientFor(key));
    if (problem === "unauthenticated") {
      log.error(unauthenticatedHelp);
      return 1;
    }
  }

  const sessionId = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const results = await Promise.all(
    options.scenarios.map((name, index) => {
      const scenario = SCENARIOS[name];
      const ctx: ScenarioContext = {
        client: clientFor(keys.get(scenario.agent)!),
        log: prefixedLogger(name, width, index),
        stop: stop.signal,
        sessionId,
        timeoutSecs: options.timeoutSecs,
        queue: keyFromEnv && options.queueGiven ? options.queue : queues.get(scenario.agent),
        unauthenticatedHelp,
      };
      return runScenario(scenario, ctx);
    }),
  );
  return summarize(results, log.info);
}

function describeSetup(
  setup: Awaited<ReturnType<typeof setUpDemo>>,
  options: Options,
  say: (line: string) => void,
) {
  const keys = [...setup.keys.values()];
  const named = (list: typeof keys) => list.map((key) => `“${key.name}”`).join(" and ");
  const created = keys.filter((key) => key.created);
  const reused = keys.filter((key) => !key.created);
  const parts = [
    created.length ? `new agent keys for ${named(created)}` : "",
    reused.length
      ? `reused the agent keys of ${named(reused)} (each rotated for a fresh secret)`
      : "",
  ].filter(Boolean);
  say(
    `Countersign is up at ${options.baseUrl}; ${parts.join("; ")} → queue “${setup.queue.name}”.`,
  );
  for (const key of keys) {
    if (key.duplicates.length === 0) continue;
    say(
      `${key.duplicates.length} more active key(s) are named “${key.name}” (earlier demos made new ones each time); ` +
        `revoke each by id so the name means one key: ${key.duplicates
          .map((id) => `npm run admin -- agent revoke --name ${id}`)
          .join("; ")}`,
    );
  }
  if (setup.members.length === 0 && !setup.anyAccount) {
    // The first sign-up makes its account an admin of every queue, this one included.
    say(
      `nobody has an account yet: open ${options.baseUrl} and sign up; the first account becomes an admin of “${setup.queue.name}” and sees these cards.`,
    );
  } else if (setup.members.length === 0) {
    say(
      setup.createdQueue
        ? `created the queue “${setup.queue.name}”: nobody is a member yet, so nobody can see its cards.`
        : `nobody is a member of the queue “${setup.queue.name}” yet, so nobody can see its cards.`,
    );
    say("  add a reviewer (then sign in as them) with:");
    say(
      `  npm run admin -- reviewer create --email you@example.com --name "Your Name" --password 'a long password' --queue "${setup.queue.name}:admin"`,
    );
  } else {
    const shown = setup.members.slice(0, 5).map((m) => `${m.name} (${m.role})`);
    const more = setup.members.length > 5 ? ` and ${setup.members.length - 5} more` : "";
    say(`reviewers of “${setup.queue.name}”: ${shown.join(", ")}${more}.`);
  }
  say(
    `open ${options.baseUrl} and sign in to decide the cards. The tools are fake: they print what they would do.`,
  );
}

async function keyProblem(client: DemoApiClient): Promise<"unauthenticated" | null> {
  try {
    // A run id nobody has: a known key gets 404, an unknown one 401.
    await client.getRun("00000000-0000-7000-8000-000000000000");
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 401) return "unauthenticated";
  }
  return null;
}

function summarize(results: ScenarioResult[], say: (line: string) => void): number {
  const count = (r: ScenarioResult) => results.filter((x) => x === r).length;
  if (count("stopped")) {
    say("stopped.");
    return 130;
  }
  if (count("failed")) {
    say(
      `${count("completed")} of ${results.length} runs completed; ${count("failed")} failed (see above).`,
    );
    return 1;
  }
  const n = results.length;
  say(
    n === 1 ? "the run completed." : n === 2 ? "both runs completed." : `all ${n} runs completed.`,
  );
  return 0;
}

main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  });
