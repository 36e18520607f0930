import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createClient as generateHeyApiClient } from "@hey-api/openapi-ts";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import type { TestServer } from "@/test/support/server";

// Issue 15: an agent developer outside this repository generates a client from the served
// OpenAPI document with a standard generator (openapi-typescript, with openapi-fetch as the
// client), type-checks their code against it under `nodenext`, and runs one whole agent flow:
// create a run → a reviewer decides → long-poll → claim → complete.

const run = promisify(execFile);

// The agent developer's code, written against the generated `paths` only.
const FLOW = `import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

export async function agentFlow(baseUrl: string, agentKey: string, reviewerToken: string) {
  const as = (token: string) =>
    createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + token } });
  const agent = as(agentKey);
  const reviewer = as(reviewerToken);

  const created = await agent.POST("/runs", {
    body: { batch: { calls: [{ toolCallId: "c1", toolName: "refund_order", args: { orderId: "A-1" } }] } },
  });
  if (!created.data) throw new Error("create run: " + JSON.stringify(created.error));
  const runId = created.data.id;
  const batch = created.data.batches?.[0];
  if (!batch) throw new Error("the run has no batch");
  const call = batch.calls[0]!;

  const decided = await reviewer.POST("/calls/{callId}/decision", {
    params: { path: { callId: call.id } },
    body: { outcome: "approve", expectedRevision: call.revision },
  });
  if (!decided.data) throw new Error("decide: " + JSON.stringify(decided.error));

  const waited = await agent.GET("/batches/{batchId}", {
    params: { path: { batchId: batch.id }, query: { wait: 10 } },
  });
  if (!waited.data) throw new Error("long-poll: " + JSON.stringify(waited.error));

  const claim = await agent.POST("/runs/{runId}/claim", {
    params: { path: { runId } },
    body: { workerId: "worker-1" },
  });
  if (!claim.data) throw new Error("claim: " + JSON.stringify(claim.error));

  const done = await agent.POST("/runs/{runId}/complete", {
    params: { path: { runId } },
    body: { claimToken: claim.data.claimToken, outcome: "completed" },
  });
  if (!done.data) throw new Error("complete: " + JSON.stringify(done.error));
  return { outcome: waited.data.outcome, claimed: claim.data.batch?.id, status: done.data.status };
}
`;

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startApiServer("openapi-client");
  // Inside the repository (test-results/ is ignored), so the project resolves openapi-fetch from
  // its node_modules as an installed dependency.
  await mkdir("test-results", { recursive: true });
  dir = await mkdtemp(path.resolve("test-results", "openapi-client-"));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a client generated from the served OpenAPI document", () => {
  it("type-checks under nodenext and drives a whole agent flow", async () => {
    const team = await makeTeam();
    // ?server=absolute: the document names where the API is, so the client is not told by hand
    const document = await (
      await fetch(`${server.baseUrl}/api/v1/openapi.json?server=absolute`)
    ).json();
    expect(document.servers).toEqual([
      { url: `${server.baseUrl}/api/v1`, description: expect.any(String) },
    ]);
    await writeFile(path.join(dir, "schema.d.ts"), astToString(await openapiTS(document)));
    await writeFile(path.join(dir, "flow.ts"), FLOW);
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    await writeFile(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ["flow.ts"],
      }),
    );
    const tsc = path.resolve("node_modules/typescript/bin/tsc");
    await run(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.json")]).catch((error) => {
      throw new Error(`tsc refused the flow:\n${error.stdout}${error.stderr}`);
    });

    const { agentFlow } = (await import(path.join(dir, "flow.ts"))) as {
      agentFlow: (
        baseUrl: string,
        agentKey: string,
        reviewerToken: string,
      ) => Promise<{ outcome: string; claimed: string | undefined; status: string }>;
    };
    const result = await agentFlow(document.servers[0].url, team.agent.key, team.reviewer.token);
    expect(result.outcome).toBe("approved");
    expect(result.claimed).toBeTruthy();
    expect(result.status).toBe("completed");
  }, 60_000);

  // Issue 27: hey-api's generator (client-fetch and its SDK plugin, with auth) on the served
  // document. Each generated function carries the security of its operation: an agent-only one
  // asks for one bearer credential, a reviewer one for a bearer credential or the session cookie,
  // a session-only one for the cookie alone. hey-api hands its auth hook only `{ scheme, type }`
  // (not the scheme's name or bearerFormat), so a program holding both credentials gives each its
  // own client, as below; the base URL comes from `?server=absolute`.
  it("generates a hey-api client whose functions name their credentials and drive the flow", async () => {
    const team = await makeTeam();
    const document = await (
      await fetch(`${server.baseUrl}/api/v1/openapi.json?server=absolute`)
    ).json();
    const output = path.join(dir, "hey-api");
    await generateHeyApiClient({
      input: document,
      output: { path: output },
      plugins: ["@hey-api/client-fetch", { name: "@hey-api/sdk", auth: true }],
      logs: { level: "silent" },
    } as never);

    const sdk = await readFile(path.join(output, "sdk.gen.ts"), "utf8");
    const securityOf = (operationId: string) => {
      const start = sdk.indexOf(`export const ${operationId} = `);
      expect(start, operationId).toBeGreaterThan(-1);
      const body = sdk.slice(start, sdk.indexOf("url:", start));
      return {
        bearer: body.match(/scheme: 'bearer'/g)?.length ?? 0,
        cookie: body.match(/in: 'cookie'/g)?.length ?? 0,
      };
    };
    expect(securityOf("createRun")).toEqual({ bearer: 1, cookie: 0 });
    expect(securityOf("claimRun")).toEqual({ bearer: 1, cookie: 0 });
    expect(securityOf("decideCall")).toEqual({ bearer: 1, cookie: 1 });
    expect(securityOf("issuePasswordReset")).toEqual({ bearer: 0, cookie: 1 });
    // the error body's type does not shadow the language's own Error
    const types = await readFile(path.join(output, "types.gen.ts"), "utf8");
    expect(types).toContain("export type ErrorResponse = {");
    expect(types).not.toMatch(/export type Error\b/);
    expect(await readFile(path.join(output, "client.gen.ts"), "utf8")).toContain(
      `baseUrl: '${server.baseUrl}/api/v1'`,
    );

    await writeFile(
      path.join(dir, "hey-flow.ts"),
      `import { createClient } from "./hey-api/client";
import { client } from "./hey-api/client.gen";
import { claimRun, completeRun, createRun, decideCall, getBatch } from "./hey-api/sdk.gen";

export async function heyFlow(agentKey: string, reviewerToken: string) {
  // one client per credential (the auth hook is asked for "a bearer token" either way), each with
  // the generated client's config: its baseUrl is the document's absolute server
  const agent = createClient({ ...client.getConfig(), auth: () => agentKey });
  const reviewer = createClient({ ...client.getConfig(), auth: () => reviewerToken });
  const created = await createRun({
    client: agent,
    body: { batch: { calls: [{ toolCallId: "c1", toolName: "refund_order", args: { orderId: "A-2" } }] } },
  });
  const batch = created.data?.batches?.[0];
  if (!batch) throw new Error("create run: " + JSON.stringify(created.error));
  const call = batch.calls[0]!;
  const decided = await decideCall({
    client: reviewer,
    path: { callId: call.id },
    body: { outcome: "approve", expectedRevision: call.revision },
  });
  if (!decided.data) throw new Error("decide: " + JSON.stringify(decided.error));
  // an agent-only operation called with the reviewer's client is refused: the credential matters
  const refused = await claimRun({ client: reviewer, path: { runId: batch.runId }, body: { workerId: "w" } });
  const waited = await getBatch({ client: agent, path: { batchId: batch.id }, query: { wait: 10 } });
  const claim = await claimRun({ client: agent, path: { runId: batch.runId }, body: { workerId: "w" } });
  if (!claim.data) throw new Error("claim: " + JSON.stringify(claim.error));
  const done = await completeRun({
    client: agent,
    path: { runId: batch.runId },
    body: { claimToken: claim.data.claimToken, outcome: "completed" },
  });
  return { refused: refused.response.status, outcome: waited.data?.outcome, status: done.data?.status };
}
`,
    );
    const { heyFlow } = (await import(path.join(dir, "hey-flow.ts"))) as {
      heyFlow: (
        agentKey: string,
        reviewerToken: string,
      ) => Promise<{ refused: number; outcome: string; status: string }>;
    };
    expect(await heyFlow(team.agent.key, team.reviewer.token)).toEqual({
      refused: 403,
      outcome: "approved",
      status: "completed",
    });
  }, 60_000);
});
