import { execFile, spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startEverything, type EverythingHost } from "@/test/mcp-gateway/everything-host";
import { GATEWAY_BIN } from "@/test/mcp-gateway/gateway-process";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { ensureNode24 } from "@/test/support/node24";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";

// Issue 25's transparency, judged by the official MCP conformance suite
// (@modelcontextprotocol/conformance, a client that checks servers over streamable HTTP): every
// scenario that passes against the reference server (@modelcontextprotocol/server-everything)
// directly passes through the gateway in front of it (`--listen`, `--upstream-url`), its
// tools/calls allowed by a policy of Countersign, so each goes through the gate.
//
// Many scenarios fail directly: they call the fixtures of the suite's own test server
// (`test_image_content`, `test://static-text` …), which server-everything does not have. Those
// say nothing about the gateway; the ones that pass directly must stay passing.
//
// The suite runs as a child process, asynchronously: server-everything is hosted in this test's
// own process, so a synchronous child (execFileSync) would block the host's event loop and every
// scenario would time out waiting for initialize.

const CONFORMANCE_CLI = join(
  process.cwd(),
  "node_modules/@modelcontextprotocol/conformance/dist/index.js",
);

let server: TestServer;
let everything: EverythingHost;
let gateway: ChildProcess;
let gatewayUrl: string;
let gatewayLog = "";

beforeAll(async () => {
  const [started, host] = await Promise.all([
    startApiServer("mcp-gateway-conformance"),
    startEverything(),
  ]);
  server = started;
  everything = host;
  const t = await makeQuickTeam();
  const lead = await makeReviewer({ queues: [{ name: t.queue.name, role: "lead" }] });
  const rule = await apiClient(server.baseUrl, lead.token).post("/policy-rules", {
    queue: t.queue.name,
    name: "the reference server may do anything",
    effect: "allow",
    toolPattern: "everything.*",
  });
  expect(rule.status).toBe(201);
  gateway = spawn(
    process.execPath,
    [
      GATEWAY_BIN,
      "--url",
      server.baseUrl,
      "--key",
      t.agent.key,
      "--name",
      "everything",
      "--listen",
      "127.0.0.1:0",
      "--upstream-url",
      everything.url,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  gateway.stderr!.on("data", (chunk) => (gatewayLog += chunk));
  gatewayUrl = await waitUntil(() => /listening on (http:\S+)/.exec(gatewayLog)?.[1], {
    timeoutMs: 15_000,
    what: "the gateway to listen",
  });
}, 120_000);

afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((resolve) => gateway.once("exit", resolve));
    gateway.kill("SIGTERM");
    await exited;
  }
  await everything?.close();
  await server?.stop();
});

type Verdicts = { passed: string[]; failed: string[]; output: string };

/**
 * The suite's server scenarios against `url` (`--suite all`: the pending ones too), read from its
 * summary: ✓ when none of a scenario's checks failed.
 */
async function conformance(url: string): Promise<Verdicts> {
  const node = ensureNode24();
  let output: string;
  try {
    const run = await promisify(execFile)(
      node,
      [CONFORMANCE_CLI, "server", "--url", url, "--suite", "all"],
      {
        timeout: 150_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    output = run.stdout + run.stderr;
  } catch (error) {
    // It exits 1 when any scenario fails; the summary is still there.
    const failed = error as { stdout?: string; stderr?: string };
    output = `${failed.stdout ?? ""}${failed.stderr ?? ""}`;
  }
  const summary = output.split("=== SUMMARY ===")[1];
  if (!summary) throw new Error(`The conformance suite printed no summary:\n${output}`);
  const verdicts: Verdicts = { passed: [], failed: [], output };
  for (const [, mark, scenario] of summary.matchAll(/^([✓✗]) (\S+): \d+ passed, \d+ failed$/gm))
    (mark === "✓" ? verdicts.passed : verdicts.failed).push(scenario!);
  return verdicts;
}

it("every conformance scenario that passes directly passes through the gateway", async () => {
  const started = Date.now();
  const [directly, through] = await Promise.all([
    conformance(everything.url),
    conformance(gatewayUrl),
  ]);
  console.log(
    [
      `MCP conformance (${Date.now() - started} ms), server-everything directly: ${directly.passed.length} pass: ${directly.passed.join(", ")}`,
      `  fail: ${directly.failed.join(", ")}`,
      `through countersign-mcp-gateway: ${through.passed.length} pass: ${through.passed.join(", ")}`,
      `  fail: ${through.failed.join(", ")}`,
    ].join("\n"),
  );
  // The run reached the server: these need nothing server-everything lacks.
  expect(directly.passed).toEqual(
    expect.arrayContaining([
      "server-initialize",
      "ping",
      "tools-list",
      "tools-call-simple-text",
      "resources-list",
      "prompts-list",
    ]),
  );
  const lost = directly.passed.filter((scenario) => !through.passed.includes(scenario));
  expect(lost, `passing directly, failing through the gateway:\n${through.output}`).toEqual([]);
}, 300_000);
