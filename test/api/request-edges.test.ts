import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  makeQuickTeam,
  pausedRun,
  startApiServer,
  writeSnapshot,
} from "@/test/support/api-fixtures";
import { makeQueue } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import {
  actionPagePath,
  findServerAction,
  invokeServerAction,
  serverActions,
} from "@/test/support/server-actions";
import { sessionCookie } from "@/test/support/sessions";

// Issue 14's holes at the request's edge, replayed over HTTP against `npm start`'s server as an
// attacker would send them: the sign-in redirect (finding 1), deep JSON (6), the cross-site check
// and a non-Bearer Authorization header (8a), framing (8b), a `null` body (8e) and the snapshot's
// queue filter (8f).

let server: TestServer;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;
let agent: ApiClient;
let cookie: string;

beforeAll(async () => {
  server = await startApiServer("request-edges");
  team = await makeQuickTeam();
  agent = apiClient(server.baseUrl, team.agent.key);
  // A reviewer who signs in through the web app (makeQuickTeam's share one password hash).
  cookie = await sessionCookie(server.baseUrl, team.reviewer.email);
}, 90_000);
afterAll(() => server?.stop());

const HOSTILE_NEXT = [
  "/%5Cevil.example/x",
  "/%5C%5Cevil.example",
  "/%09/evil.example",
  "/%0A/evil.example",
  "//evil.example/x",
  "/%2F/evil.example",
  "https://evil.example/x",
];

describe("sign-in's next (finding 1)", () => {
  it.each(HOSTILE_NEXT)("a signed-in visit of ?next=%s stays on the app's origin", async (next) => {
    const response = await fetch(`${server.baseUrl}/sign-in?next=${next}`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(response.status).toBe(307);
    const location = response.headers.get("location")!;
    expect(location).not.toMatch(/evil|\\|%5c|%09|%0a/i);
    expect(new URL(location, server.baseUrl).origin).toBe(server.baseUrl);
    expect(new URL(location, server.baseUrl).pathname).toBe("/queue");
  });

  it("keeps a plain path of the app", async () => {
    const response = await fetch(`${server.baseUrl}/sign-in?next=/history%3Fq%3Da`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(response.headers.get("location")).toBe("/history?q=a");
  });

  it("hands the form only the default page for a hostile next", async () => {
    for (const next of HOSTILE_NEXT) {
      const html = await (await fetch(`${server.baseUrl}/sign-in?next=${next}`)).text();
      // The form's props in the page's payload (the address itself is echoed, escaped, as data).
      expect(html, next).toContain('{\\"next\\":\\"/queue\\",');
    }
  });
});

/** `{"a":{"a":…}}` nested `depth` objects deep, built as text (building it as a value is fine too). */
function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

describe("deeply nested JSON (finding 6)", () => {
  it("POST /runs with args nested 2,000 deep is 400 invalid_request and writes nothing", async () => {
    const before = await writeSnapshot();
    const body = `{"batch":{"calls":[{"toolCallId":"t1","toolName":"refund_order","args":${deepJson(2_000)}}]}}`;
    const answer = await agent.raw("/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(answer.status).toBe(400);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("invalid_request");
    expect(error.message).toMatch(/nest/i);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("arrays count as well, and 256 levels are still accepted", async () => {
    const arrays = `{"metadata":{"x":${"[".repeat(300)}${"]".repeat(300)}}}`;
    const refused = await agent.raw("/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: arrays,
    });
    expect(refused.status).toBe(400);
    // the body object, metadata, and 254 more levels: 256 in all
    const fine = await agent.raw("/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"metadata":${deepJson(255)}}`,
    });
    expect(fine.status).toBe(201);
    // brackets inside strings are text, not nesting
    const inString = await agent.post("/runs", { metadata: { note: "[".repeat(5_000) } });
    expect(inString.status).toBe(201);
  });

  it("the MCP endpoint refuses it the same way", async () => {
    const answer = await fetch(`${server.baseUrl}/api/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${team.agent.key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${deepJson(2_000)}}`,
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
      "invalid_request",
    );
  });
});

describe("deeply nested server-action arguments (finding 6)", () => {
  it("an edit nested 1,000 deep is refused with invalid_request, and nothing is written", async () => {
    const { batch } = await pausedRun(agent, refundBatch());
    const call = batch.calls[0];
    let editedArgs: unknown = 1;
    for (let i = 0; i < 1_000; i++) editedArgs = { a: editedArgs };
    const action = findServerAction(
      serverActions(),
      "app/(reviewer)/actions.ts",
      "decideCallAction",
    );
    const before = await writeSnapshot();
    const answer = await invokeServerAction(
      server.baseUrl,
      action,
      actionPagePath(action, { batchId: batch.id }),
      [batch.id, call.id, { outcome: "edit", expectedRevision: call.revision, editedArgs }],
      { cookie },
    );
    expect(answer.status, answer.raw.slice(0, 300)).toBe(200);
    expect(answer.result).toMatchObject({ ok: false, code: "invalid_request" });
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("server-action arguments too deep for Next's decoder (finding 6, replayed)", () => {
  it("are answered 400 before Next decodes them, not 500, and nothing is written", async () => {
    const action = findServerAction(
      serverActions(),
      "app/(reviewer)/actions.ts",
      "decideCallAction",
    );
    const before = await writeSnapshot();
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const response = await fetch(`${server.baseUrl}/queue`, {
      method: "POST",
      headers: {
        accept: "text/x-component",
        "content-type": "text/plain;charset=UTF-8",
        "next-action": action.id,
        origin: server.baseUrl,
        cookie,
      },
      body: `["x",${deep}]`,
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/nest at most/);
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("a JSON null body (finding 8e)", () => {
  it.each([
    ["/runs", "agent"],
    ["/runs/{run}/rollback", "agent"],
    ["/batches/{batch}/cancel", "agent"],
  ])("POST %s with `null` is 400 invalid_request and writes nothing", async (path) => {
    const { run, batch } = await pausedRun(agent, refundBatch());
    const before = await writeSnapshot();
    const answer = await agent.raw(path.replace("{run}", run.id).replace("{batch}", batch.id), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "null",
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
      "invalid_request",
    );
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("the API's cross-site check (finding 8a)", () => {
  it("a session cookie sent with a non-Bearer Authorization header and a foreign Origin is refused", async () => {
    const { run } = await pausedRun(agent, refundBatch());
    const before = await writeSnapshot();
    const answer = await fetch(`${server.baseUrl}/api/v1/runs/${run.id}/rollback`, {
      method: "POST",
      headers: {
        cookie,
        authorization: "Basic Zm9vOmJhcg==",
        origin: "https://evil.example",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("the same request from the app's own origin still works", async () => {
    const { run } = await pausedRun(agent, refundBatch());
    const answer = await fetch(`${server.baseUrl}/api/v1/runs/${run.id}/rollback`, {
      method: "POST",
      headers: {
        cookie,
        authorization: "Basic Zm9vOmJhcg==",
        origin: server.baseUrl,
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(answer.status).toBe(202);
  });
});

describe("framing (finding 8b)", () => {
  it.each(["/sign-in", "/sign-in?next=/queue", "/setup", "/queue", "/history", "/not-a-page"])(
    "%s may be framed by nobody",
    async (path) => {
      const response = await fetch(`${server.baseUrl}${path}`, { redirect: "manual" });
      expect(response.headers.get("x-frame-options"), path).toBe("DENY");
      expect(response.headers.get("content-security-policy"), path).toMatch(
        /(^|; )frame-ancestors 'none'(;|$)/,
      );
    },
  );

  it("the embed route keeps its own allow-list", async () => {
    for (const path of ["/embed/batches/x", "/embed/sign-in?next=/embed/batches/x"]) {
      const response = await fetch(`${server.baseUrl}${path}`, { redirect: "manual" });
      expect(response.headers.get("x-frame-options"), path).toBeNull();
      expect(response.headers.get("content-security-policy"), path).toContain(
        "frame-ancestors 'self'",
      );
    }
  });
});

describe("GET /queue/snapshot?queue= (finding 8f)", () => {
  it("answers 404 for a queue the reviewer is not in, as /queue does", async () => {
    const reviewer = apiClient(server.baseUrl, team.reviewer.token);
    const foreign = await makeQueue();
    for (const queue of [foreign.id, "01a20000-0000-7000-8000-000000000000"]) {
      const listed = await reviewer.get(`/queue?queue=${queue}`);
      const snapshot = await reviewer.get(`/queue/snapshot?queue=${queue}`);
      expect(listed.status).toBe(404);
      expect(snapshot.status).toBe(404);
      expect(snapshot.body).toEqual(listed.body);
    }
  });

  it("filters to the queue named", async () => {
    const reviewer = apiClient(server.baseUrl, team.reviewer.token);
    const { batch } = await pausedRun(agent, refundBatch());
    const answer = await reviewer.get(`/queue/snapshot?queue=${team.queue.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.batches.map((b: { id: string }) => b.id)).toContain(batch.id);
    for (const b of answer.body.batches) expect(b.queue.id).toBe(team.queue.id);
  });
});
