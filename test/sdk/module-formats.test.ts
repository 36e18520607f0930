import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue 27: `@countersign/sdk` from a CommonJS project (what `npm init -y` makes) and from an ESM
// one. The workspace is packed (its prepack builds dist/) and the tarball installed into fresh
// projects outside the repository; each loads the package with plain node, from JavaScript and
// from TypeScript compiled under the module settings the SDK's README names. Node ≥ 20.19 can
// `require()` an ES module: the exports map's `require` condition lets it.

const execFileAsync = promisify(execFile);
const repoRoot = process.cwd();
const tscBin = path.join(repoRoot, "node_modules/typescript/bin/tsc");

// A fetch that answers like a server whose agent key was revoked: no server needed to show the
// client runs and reads the contract's error codes.
const USE_SDK = (load: string) => `${load}

const fetch = async () =>
  new Response(JSON.stringify({ error: { code: "key_revoked", message: "revoked" } }), {
    status: 409,
    headers: { "content-type": "application/json" },
  });
const client = new Countersign({ baseUrl: "http://127.0.0.1:9", apiKey: "cs_agent_x", fetch, retry: false });
client.getRun("run-1").then(
  () => console.log(JSON.stringify({ error: null })),
  (error) =>
    console.log(
      JSON.stringify({
        error: error.code,
        isCountersignError: CountersignError.is(error, "key_revoked"),
        knownCode: API_ERROR_CODES.includes(error.code),
      }),
    ),
);
`;

const EXPECTED = { error: "key_revoked", isCountersignError: true, knownCode: true };

let workDir: string;
let tarball: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "countersign-sdk-formats-"));
  const { stdout } = await execFileAsync(
    "npm",
    ["pack", "--workspace", "@countersign/sdk", "--pack-destination", workDir, "--json"],
    { cwd: repoRoot },
  ).catch((error) => {
    throw new Error(`npm pack failed:\n${error.stdout}${error.stderr}`);
  });
  tarball = path.join(workDir, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
}, 120_000);
afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** A fresh project with the tarball installed; `type` as its package.json says (none: CommonJS). */
async function project(name: string, type?: "module"): Promise<string> {
  const dir = path.join(workDir, name);
  await mkdir(dir);
  // what `npm init -y` writes, less the noise: no "type", so .js files are CommonJS
  await writeFile(
    path.join(dir, "package.json"),
    JSON.stringify({ name, version: "1.0.0", main: "index.js", ...(type && { type }) }),
  );
  await execFileAsync("npm", ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: dir,
  }).catch((error) => {
    throw new Error(`npm install of the tarball failed:\n${error.stdout}${error.stderr}`);
  });
  return dir;
}

async function runNode(dir: string, file: string) {
  const { stdout, stderr } = await execFileAsync(process.execPath, [file], { cwd: dir }).catch(
    (error) => {
      throw new Error(`node ${file} failed:\n${error.stdout}${error.stderr}`);
    },
  );
  return { result: JSON.parse(stdout.trim()), stderr };
}

async function compile(dir: string, file: string, compilerOptions: Record<string, unknown>) {
  await writeFile(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "es2022",
        types: [],
        lib: ["es2022", "dom"],
        ...compilerOptions,
      },
      files: [file],
    }),
  );
  await execFileAsync(process.execPath, [tscBin, "-p", dir]).catch((error) => {
    throw new Error(
      `tsc refused ${file} with ${JSON.stringify(compilerOptions)}:\n${error.stdout}${error.stderr}`,
    );
  });
}

describe("@countersign/sdk from a CommonJS project", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await project("cjs-agent");
  }, 120_000);

  it("loads with require() in plain JavaScript", async () => {
    await writeFile(
      path.join(dir, "index.js"),
      USE_SDK(
        `const { API_ERROR_CODES, Countersign, CountersignError } = require("@countersign/sdk");`,
      ),
    );
    const { result } = await runNode(dir, "index.js");
    expect(result).toEqual(EXPECTED);
  });

  // TypeScript compiles `import` to `require()` here; `module: nodenext` (TypeScript ≥ 5.8)
  // allows requiring an ES module, `moduleResolution: node10` reads the top-level main/types.
  it.each([
    { module: "nodenext", moduleResolution: "nodenext" },
    { module: "commonjs", moduleResolution: "node10" },
  ])("loads from TypeScript compiled with %o", async (options) => {
    const source = `agent-${options.moduleResolution}.ts`;
    await writeFile(
      path.join(dir, source),
      USE_SDK(
        `import { API_ERROR_CODES, Countersign, CountersignError, type Batch } from "@countersign/sdk";\nexport type Paused = Batch;`,
      ),
    );
    await compile(dir, source, { ...options, outDir: `out-${options.moduleResolution}` });
    const { result } = await runNode(
      dir,
      `out-${options.moduleResolution}/${source.replace(/ts$/, "js")}`,
    );
    expect(result).toEqual(EXPECTED);
  });

  // what the README says does not work, so that it stays true: node16 will not require() ESM
  it("is refused by TypeScript's module node16 (TS1479), as the README says", async () => {
    await writeFile(
      path.join(dir, "agent-node16.ts"),
      `import { Countersign } from "@countersign/sdk";\nexport const made = Countersign;\n`,
    );
    await expect(
      compile(dir, "agent-node16.ts", {
        module: "node16",
        moduleResolution: "node16",
        noEmit: true,
      }),
    ).rejects.toThrow(/TS1479/);
  });
});

describe("@countersign/sdk from an ESM project", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await project("esm-agent", "module");
  }, 120_000);

  it("loads with import in plain JavaScript", async () => {
    await writeFile(
      path.join(dir, "index.js"),
      USE_SDK(`import { API_ERROR_CODES, Countersign, CountersignError } from "@countersign/sdk";`),
    );
    const { result } = await runNode(dir, "index.js");
    expect(result).toEqual(EXPECTED);
  });

  it("loads from TypeScript compiled under nodenext", async () => {
    await writeFile(
      path.join(dir, "agent.ts"),
      USE_SDK(`import { API_ERROR_CODES, Countersign, CountersignError } from "@countersign/sdk";`),
    );
    await compile(dir, "agent.ts", {
      module: "nodenext",
      moduleResolution: "nodenext",
      outDir: "out",
    });
    const { result } = await runNode(dir, "out/agent.js");
    expect(result).toEqual(EXPECTED);
  });
});
