import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide, pendingBatch } from "@/test/sdk/fixtures";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// Issue 15: `@countersign/sdk` as an agent developer gets it. The workspace is packed with
// `npm pack` (its prepack builds dist/ from the sources), the tarball is installed into a fresh
// project outside the repository, and two agents written in TypeScript against the installed
// package are type-checked and compiled under `nodenext`, then run by plain `node` against a real
// server: the README's quick start (gate() pauses, a reviewer approves, the tool runs), and a
// step-by-step agent that pauses with a checkpoint, is edited by a reviewer, claims the run and
// resumes with what the reviewer approved.

const execFileAsync = promisify(execFile);
const repoRoot = process.cwd();
const tscBin = path.join(repoRoot, "node_modules/typescript/bin/tsc");

// The step-by-step flow, plus the Vercel AI SDK adapter imported from its subpath export (its
// types are checked and its module loaded; `ai` is the adapter's peer).
const STEP_BY_STEP_AGENT = `import { Countersign, type Batch } from "@countersign/sdk";
import { requestApprovals, type RequestApprovalsOptions } from "@countersign/sdk/adapters/vercel-ai";

type RefundArgs = { orderId: string; amount: number };

const [baseUrl, apiKey] = process.argv.slice(2);
if (!baseUrl || !apiKey) throw new Error("usage: node agent.js <baseUrl> <agentKey>");
const countersign = new Countersign({ baseUrl, apiKey });

const asked: RefundArgs = { orderId: "A-1001", amount: 250 };
const run = await countersign.createRun({
  externalId: "order-A-1001",
  batch: {
    calls: [
      {
        toolCallId: "call-1",
        toolName: "refund_order",
        args: asked,
        summary: "Refund 250 USD on order A-1001",
      },
    ],
    checkpoint: { step: "refund", orderId: asked.orderId },
  },
});
const paused: Batch | undefined = run.batches?.[0];
if (!paused) throw new Error("the run was created without its batch");
console.log(JSON.stringify({ event: "paused", runId: run.id, batchId: paused.id }));

const decided = await countersign.waitForDecision(paused.id, { timeoutMs: 20_000 });
const claim = await countersign.claim(run.id, { workerId: "refund-worker" });
try {
  const call = claim.batch?.calls.find((c) => c.toolCallId === "call-1");
  if (call?.decision?.outcome !== "approved") {
    await claim.complete({ refunded: null, reason: call?.decision?.reason ?? null });
  } else {
    // A reviewer who edited the call approved editedArgs: that is what runs.
    const args = (call.decision.editedArgs ?? call.args) as RefundArgs;
    const refund = { orderId: args.orderId, refunded: args.amount };
    await claim.reportToolResult(call.toolCallId, refund);
    await claim.complete(refund);
  }
} finally {
  claim.release();
}

const adapterOptions: RequestApprovalsOptions = {
  run: run.id,
  summary: (request) => \`\${request.toolName} asks for approval\`,
};
console.log(
  JSON.stringify({
    event: "completed",
    outcome: decided.outcome,
    checkpoint: claim.checkpoint,
    adapterLoaded: typeof requestApprovals === "function" && typeof adapterOptions.summary === "function",
  }),
);
`;

type PackedFile = { path: string };
type Packed = { filename: string; files: PackedFile[] };
type Manifest = {
  dependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, string | { types: string; import: string }>;
};

let server: TestServer;
let workDir: string;
let projectDir: string;
let packed: Packed;
let manifest: Manifest;
/** what `npm install <tarball>` put in the project's node_modules, by npm's own account */
let installedPackages: string[];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "countersign-sdk-"));
  [server, packed] = await Promise.all([startApiServer("sdk-package"), packSdk(workDir)]);

  projectDir = path.join(workDir, "agent-project");
  await mkdir(projectDir);
  await writeFile(
    path.join(projectDir, "package.json"),
    JSON.stringify({ name: "refund-agent", private: true, type: "module" }),
  );
  await execFileAsync(
    "npm",
    ["install", path.join(workDir, packed.filename), "--prefer-offline", "--no-audit", "--no-fund"],
    { cwd: projectDir },
  ).catch((error) => {
    throw new Error(`npm install of the tarball failed:\n${error.stdout}${error.stderr}`);
  });
  const installed = path.join(projectDir, "node_modules");
  manifest = JSON.parse(
    await readFile(path.join(installed, "@countersign/sdk/package.json"), "utf8"),
  );
  installedPackages = Object.keys(
    JSON.parse(await readFile(path.join(installed, ".package-lock.json"), "utf8")).packages,
  );

  // What the developer adds next to the SDK: Node's types and the one framework they use.
  await mkdir(path.join(installed, "@types"));
  await symlink(
    path.join(repoRoot, "node_modules/@types/node"),
    path.join(installed, "@types/node"),
  );
  await symlink(path.join(repoRoot, "node_modules/ai"), path.join(installed, "ai"));

  await writeFile(path.join(projectDir, "quick-start.ts"), await readmeQuickStart());
  await writeFile(path.join(projectDir, "step-by-step.ts"), STEP_BY_STEP_AGENT);
  await writeFile(
    path.join(projectDir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        types: ["node"],
        // The package's own declarations are checked too: an extensionless import in them
        // would only show up here.
        skipLibCheck: false,
        outDir: "out",
      },
      files: ["quick-start.ts", "step-by-step.ts"],
    }),
  );
  await execFileAsync(process.execPath, [tscBin, "-p", projectDir]).catch((error) => {
    throw new Error(`tsc refused the agents under nodenext:\n${error.stdout}${error.stderr}`);
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** The first TypeScript block under "## Quick start" in the package's README, as a reader copies it. */
async function readmeQuickStart(): Promise<string> {
  const readme = await readFile(path.join(repoRoot, "lib/sdk/README.md"), "utf8");
  const section = readme.split(/^## Quick start$/m)[1];
  const code = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (!code) throw new Error("lib/sdk/README.md has no ```ts block under '## Quick start'");
  return code;
}

/** Starts a compiled agent with plain node; its stdout lines are collected as they come. */
function startAgent(script: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [path.join(projectDir, "out", script), ...args], {
    cwd: projectDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
  const exitCode = new Promise<number | null>((resolve) => child.on("close", resolve));
  return { lines, exitCode, stderr: () => stderr, kill: () => child.kill() };
}

/** `npm pack` of the workspace, as a publish would make it; returns npm's account of the tarball. */
async function packSdk(destination: string): Promise<Packed> {
  const { stdout } = await execFileAsync(
    "npm",
    ["pack", "--workspace", "@countersign/sdk", "--pack-destination", destination, "--json"],
    { cwd: repoRoot },
  ).catch((error) => {
    throw new Error(`npm pack failed:\n${error.stdout}${error.stderr}`);
  });
  const [result] = JSON.parse(stdout) as Packed[];
  return result!;
}

/** The module specifiers a built file imports or re-exports (JS and declarations alike). */
function importedSpecifiers(source: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"([^"]+)"/g;
  return [...source.matchAll(pattern)].map((match) => match[1]!);
}

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

describe("@countersign/sdk packed and installed into a fresh project", () => {
  it("ships dist/, README, CHANGELOG and package.json only, imports no server code and installs no dependency", async () => {
    const paths = packed.files.map((file) => file.path);
    const strays = paths.filter(
      (file) => !/^(dist\/.+|README\.md|CHANGELOG\.md|package\.json)$/.test(file),
    );
    expect(strays).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(["README.md", "CHANGELOG.md", "package.json"]));
    // Every subpath export points at files the tarball holds.
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      const targets = typeof target === "string" ? [target] : [target.types, target.import];
      for (const file of targets) expect(paths, subpath).toContain(file.replace(/^\.\//, ""));
    }
    expect(Object.keys(manifest.exports)).toEqual(
      expect.arrayContaining([
        ".",
        "./adapters/langgraph",
        "./adapters/openai-agents",
        "./adapters/vercel-ai",
      ]),
    );

    // The built files import each other with `.js` (what Node's ESM loader needs) and nothing but
    // the frameworks their adapters serve, each an optional peer: no Next.js, drizzle, libSQL or
    // `@/` app module can ride along. The client itself imports no package at all.
    expect(manifest.dependencies ?? {}).toEqual({});
    const installed = path.join(projectDir, "node_modules/@countersign/sdk");
    const importedPackages = new Set<string>();
    for (const file of paths.filter((p) => /\.(js|d\.ts)$/.test(p))) {
      const specifiers = importedSpecifiers(await readFile(path.join(installed, file), "utf8"));
      for (const specifier of specifiers) {
        if (specifier.startsWith(".")) {
          expect(specifier, `${file} imports ${specifier}`).toMatch(/\.js$/);
        } else {
          expect(file, `${file} imports ${specifier}`).toMatch(/^dist\/adapters\//);
          importedPackages.add(packageOf(specifier));
        }
      }
    }
    expect([...importedPackages].sort()).toEqual(Object.keys(manifest.peerDependencies).sort());
    for (const peer of importedPackages) {
      expect(manifest.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
    }

    // Installing the tarball added exactly one package: the SDK.
    expect(installedPackages).toEqual(["node_modules/@countersign/sdk"]);
  });

  it("runs the README's quick start with plain node: gate() pauses, a reviewer approves, the tool runs", async () => {
    const team = await makeTeam();
    const agent = startAgent("quick-start.js", [], {
      CS_URL: server.baseUrl,
      CS_AGENT_KEY: team.agent.key,
    });
    const reviewer = apiClient(server.baseUrl, team.reviewer.token);
    let batch: any;
    try {
      batch = await pendingBatch(reviewer, team.queue.id);
      expect(batch.calls[0]).toMatchObject({
        toolName: "refund_order",
        args: { orderId: "A-1001", amount: 250 },
        summary: "Refund 250 USD on order A-1001",
      });
      await decide(reviewer, batch.calls[0], "approve");
      expect(await agent.exitCode, `the agent failed:\n${agent.stderr()}`).toBe(0);
    } finally {
      agent.kill();
    }
    expect(agent.lines).toEqual(["Refunded 250 USD on order A-1001"]);
    const { body: run } = await apiClient(server.baseUrl, team.agent.key).get(
      `/runs/${batch.runId}`,
    );
    expect(run.status).toBe("completed");
  });

  it("runs a step-by-step agent with plain node: pause with a checkpoint → a reviewer edits → claim → resume with the edit", async () => {
    const team = await makeTeam();
    const agent = startAgent("step-by-step.js", [server.baseUrl, team.agent.key]);
    // The reviewer finds the card in their queue and approves a smaller refund.
    const reviewer = apiClient(server.baseUrl, team.reviewer.token);
    let batch: any;
    try {
      batch = await pendingBatch(reviewer, team.queue.id);
      expect(batch.calls[0].args).toEqual({ orderId: "A-1001", amount: 250 });
      await decide(reviewer, batch.calls[0], "edit", {
        editedArgs: { orderId: "A-1001", amount: 200 },
        reason: "Shipping is not refunded",
      });

      expect(await agent.exitCode, `the agent failed:\n${agent.stderr()}`).toBe(0);
    } finally {
      agent.kill();
    }

    expect(agent.lines.map((line) => JSON.parse(line))).toEqual([
      { event: "paused", runId: batch.runId, batchId: batch.id },
      {
        event: "completed",
        outcome: "approved",
        checkpoint: { step: "refund", orderId: "A-1001" },
        adapterLoaded: true,
      },
    ]);
    const { status, body: run } = await apiClient(server.baseUrl, team.agent.key).get(
      `/runs/${batch.runId}`,
    );
    expect(status).toBe(200);
    expect(run.status).toBe("completed");
    expect(run.result).toEqual({ orderId: "A-1001", refunded: 200 });
    expect(run.batches[0].calls[0].decision).toMatchObject({
      outcome: "approved",
      editedArgs: { orderId: "A-1001", amount: 200 },
      by: { name: team.reviewer.name },
    });
  }, 45_000);
});
