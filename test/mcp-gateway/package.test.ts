import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@/test/support/server";
import { TEST_STATE_HOME } from "@/test/mcp-gateway/gateway-process";

// `@countersign/mcp-gateway` as someone outside the repository gets it: the workspace packed with
// `npm pack` (from the dist/ that `npm run build` made: --ignore-scripts, so the pack does not
// rebuild it under the other suites' feet), installed into a fresh project, and its bin run.

const execFileAsync = promisify(execFile);
const repoRoot = process.cwd();
const FAULTY = path.join(repoRoot, "test", "mcp-gateway", "faulty-server.mjs");

let workDir: string;
let projectDir: string;
let packedFiles: string[];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "countersign-gateway-pack-"));
  const { stdout } = await execFileAsync(
    "npm",
    [
      "pack",
      "--workspace",
      "@countersign/mcp-gateway",
      "--ignore-scripts",
      "--pack-destination",
      workDir,
      "--json",
    ],
    { cwd: repoRoot },
  );
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  packedFiles = packed!.files.map((file) => file.path).sort();
  projectDir = path.join(workDir, "project");
  await mkdir(projectDir);
  await writeFile(path.join(projectDir, "package.json"), JSON.stringify({ private: true }));
  await execFileAsync(
    "npm",
    [
      "install",
      path.join(workDir, packed!.filename),
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
    ],
    { cwd: projectDir },
  ).catch((error) => {
    throw new Error(`npm install of the tarball failed:\n${error.stdout}${error.stderr}`);
  });
}, 120_000);

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const bin = () => path.join(projectDir, "node_modules", ".bin", "countersign-mcp-gateway");

describe("@countersign/mcp-gateway packed and installed", () => {
  it("ships the bin, the bundled build and the README, no TypeScript sources", () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        "README.md",
        "bin/countersign-mcp-gateway.js",
        "dist/index.js",
        "dist/index.d.ts",
        "package.json",
      ]),
    );
    expect(packedFiles.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual(
      [],
    );
  });

  it("needs only the MCP SDK: @countersign/sdk is bundled in", async () => {
    const manifest = JSON.parse(
      await readFile(
        path.join(projectDir, "node_modules/@countersign/mcp-gateway/package.json"),
        "utf8",
      ),
    );
    expect(Object.keys(manifest.dependencies)).toEqual(["@modelcontextprotocol/sdk"]);
    const built = await readFile(
      path.join(projectDir, "node_modules/@countersign/mcp-gateway/dist/index.js"),
      "utf8",
    );
    expect(built).not.toMatch(/from "@countersign\/sdk"/);
  });

  it("runs from node_modules/.bin: --help, --version", async () => {
    const help = await execFileAsync(bin(), ["--help"]);
    expect(help.stdout).toContain("countersign-mcp-gateway --url URL --key KEY");
    const version = await execFileAsync(bin(), ["--version"]);
    expect(version.stdout.trim()).toBe("0.1.0");
  });

  it("gates a real call from the installed copy (Countersign down: refused, nothing ran)", async () => {
    const client = new Client({ name: "packed-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: bin(),
        args: [
          "--url",
          `http://127.0.0.1:${await freePort()}`,
          "--key",
          "cs_agent_unused",
          "--",
          process.execPath,
          FAULTY,
        ],
        env: { PATH: process.env.PATH ?? "", XDG_STATE_HOME: TEST_STATE_HOME },
        stderr: "ignore",
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("echo");
      const result = (await client.callTool({ name: "echo", arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain("nothing ran");
    } finally {
      await client.close();
    }
  });
});
