import { createInterface } from "node:readline";
import { freshDatabase } from "./database";
import { makeTeam } from "./factories";
import { startServer } from "./server";

// The real Countersign server for the Python package's pytest session (lib/python/tests/conftest.py):
// a fresh migrated database, the production server over it, and teams made on request.
//
// Protocol, one JSON object per line: at start it prints `{"baseUrl": …}`; each `team` line on
// stdin answers `{"agentKey", "reviewerToken", "webhookSecret", "queueId", "queueName",
// "reviewerName"}` for a new queue, reviewer and agent. The server stops when stdin closes (pytest
// ended, or died) or on SIGTERM, so no server outlives its test session.
//
// Run with `node_modules/.bin/tsx test/support/python-server.ts` after `npm run build`.

const databaseUrl = await freshDatabase("python");
const server = await startServer({
  databaseUrl,
  // Webhooks retried and swept fast: the tests wait for deliveries, not for backoffs.
  env: { WEBHOOK_RETRY_BASE_MS: "100", WEBHOOK_POLL_MS: "50", SWEEP_INTERVAL_MS: "200" },
});

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await server.stop();
  }
  process.exit(code);
}
process.on("SIGTERM", () => void stop(0));
process.on("SIGINT", () => void stop(0));

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
print({ baseUrl: server.baseUrl });

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const command = line.trim();
  if (command === "") return;
  if (command !== "team") {
    print({ error: `unknown command: ${command}` });
    return;
  }
  makeTeam().then(
    ({ queue, reviewer, agent }) =>
      print({
        agentKey: agent.key,
        webhookSecret: agent.webhookSecret,
        reviewerToken: reviewer.token,
        reviewerName: reviewer.name,
        queueId: queue.id,
        queueName: queue.name,
      }),
    (error: unknown) => print({ error: String(error) }),
  );
});
lines.on("close", () => void stop(0));
