import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { users } from "@/db/schema";
import { illFormedTextPath } from "@/lib/text/stored-text";
import { pausedRun, startApiServer, writeSnapshot } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import { sessionClient } from "@/test/support/sessions";
import { openSse } from "@/test/support/sse";
import type { TestServer } from "@/test/support/server";

// Issue 24, hole 6: a NUL in a name was stored, read back cut at the NUL ("a"), and every later
// rename's compare-and-swap on the old name missed (500 for ever); a lone surrogate was stored
// as U+FFFD in the column and as a "\ud800" escape in the event, which strict JSON parsers refuse
// in /audit. Every stored text now refuses both with a 400 naming the field (lib/text/stored-text.ts);
// a request body refuses lone surrogates anywhere, data (tool args) keeps control characters.

let server: TestServer;
let queue: { id: string; name: string };
let admin: TestReviewer;
let asAdmin: ApiClient;
// what leads to a credential (agent keys, invites) takes a session, never a token (issue 24, hole 3)
let adminSession: ApiClient;
let agent: ApiClient;
let agentKey: string;

beforeAll(async () => {
  server = await startApiServer("stored-text");
  queue = await makeQueue();
  admin = await makeReviewer({ name: "Ada Admin", queues: [{ name: queue.name, role: "admin" }] });
  asAdmin = apiClient(server.baseUrl, admin.token);
  adminSession = await sessionClient(server.baseUrl, admin.email);
  agentKey = (await makeAgentKey({ name: "Text bot", queues: [queue.name] })).key;
  agent = apiClient(server.baseUrl, agentKey);
}, 60_000);
afterAll(() => server?.stop());

/** As an attacker sends it: JSON.stringify writes a lone surrogate as a `\ud800` escape. */
const send = (client: ApiClient, method: string, path: string, body: unknown) =>
  client.raw(path, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function answerOf(response: Response) {
  return { status: response.status, body: await response.json() };
}

const nameOf = async (id: string) =>
  (await getDb().select({ name: users.name }).from(users).where(eq(users.id, id)))[0]!.name;

/**
 * The answer is JSON a strict parser (I-JSON, RFC 7493) takes: valid UTF-8, and no string or key
 * with an unpaired surrogate (which JSON.parse lets through as a `\ud800` escape, serde_json not).
 */
function expectStrictJson(bytes: ArrayBuffer, what: string): unknown {
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  const value = JSON.parse(text);
  expect(illFormedTextPath(value), `${what} has an unpaired surrogate`).toBeNull();
  return value;
}

describe("the NUL-in-a-name attack", () => {
  it("PATCH /people/{id} with a NUL in the name is a 400 naming the field, and a rename still works", async () => {
    const person = await makeReviewer({ name: "Nula Person", queues: [{ name: queue.name }] });
    const before = await writeSnapshot();
    const nul = await answerOf(
      await send(asAdmin, "PATCH", `/people/${person.id}`, { name: "a\u0000b" }),
    );
    expect(nul.status, JSON.stringify(nul.body)).toBe(400);
    expect(nul.body.error).toMatchObject({
      code: "invalid_request",
      issues: [{ path: "name", message: "must not contain control characters" }],
    });
    expect(await writeSnapshot()).toEqual(before);
    expect(await nameOf(person.id)).toBe("Nula Person");

    const renamed = await answerOf(
      await send(asAdmin, "PATCH", `/people/${person.id}`, { name: "Nula Renamed" }),
    );
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.name).toBe("Nula Renamed");
    const again = await answerOf(
      await send(asAdmin, "PATCH", `/people/${person.id}`, { name: "Nula Twice" }),
    );
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it("a lone surrogate in a name is a 400 (not valid Unicode text), and nothing is written", async () => {
    const person = await makeReviewer({ name: "Sura Person", queues: [{ name: queue.name }] });
    const before = await writeSnapshot();
    for (const name of ["x\ud800y", "\udfff", "ok \ud83d"]) {
      const answer = await answerOf(await send(asAdmin, "PATCH", `/people/${person.id}`, { name }));
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error.issues).toEqual([
        { path: "name", message: expect.stringMatching(/^is not valid Unicode text/) },
      ]);
    }
    expect(await writeSnapshot()).toEqual(before);
    expect(await nameOf(person.id)).toBe("Sura Person");
  });

  it("other control characters in a name are refused too, and a tab or a line break in it", async () => {
    const person = await makeReviewer({ name: "Cora Person", queues: [{ name: queue.name }] });
    for (const [name, message] of [
      ["\u001b[31mred", "must not contain control characters"],
      ["bell\u0007", "must not contain control characters"],
      ["c1\u0085", "must not contain control characters"],
      ["del\u007f", "must not contain control characters"],
      ["two\nlines", "must be one line, without line breaks or tabs"],
      ["tab\there", "must be one line, without line breaks or tabs"],
    ]) {
      const answer = await answerOf(await send(asAdmin, "PATCH", `/people/${person.id}`, { name }));
      expect(answer.status, name).toBe(400);
      expect(answer.body.error.issues, JSON.stringify(name)).toEqual([{ path: "name", message }]);
    }
    // what is not a control character stays a name: accents, emoji, right-to-left scripts
    const fine = await answerOf(
      await send(asAdmin, "PATCH", `/people/${person.id}`, { name: "Zoë 👩‍💻 شيماء" }),
    );
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
    expect(await nameOf(person.id)).toBe("Zoë 👩‍💻 شيماء");
  });
});

describe("texts across the API", () => {
  it("multi-line texts keep tabs and line breaks; agents' args keep control characters as data", async () => {
    const summary = "Refund order A-1001\n\tbecause it arrived broken\r\n";
    const args = { orderId: "A-1001", note: "raw\u0000bytes\u001b[0m\u0085" };
    const { batch } = await pausedRun(
      agent,
      refundBatch({ calls: [{ ...refundBatch().calls[0], summary, args }] }),
    );
    expect(batch.calls[0].summary).toBe(summary);
    expect(batch.calls[0].args).toEqual(args);
    const reason = "Checked with the customer.\nOK to refund.";
    const decided = await asAdmin.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: batch.calls[0].revision,
      reason,
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body.call.decision.reason).toBe(reason);
    const read = await asAdmin.get(`/batches/${batch.id}`);
    expect(read.body.calls[0].args).toEqual(args);
  });

  it("a reviewer's edited plan summary is held to the same rules as the agent's", async () => {
    const { batch } = await pausedRun(agent, {
      kind: "plan",
      plan: { summary: "Migrate the database", risks: ["downtime"] },
    });
    const call = batch.calls[0];
    const edit = (summary: string) =>
      asAdmin.post(`/calls/${call.id}/decision`, {
        outcome: "edit",
        expectedRevision: call.revision,
        editedArgs: { ...call.args, summary },
      });
    const before = await writeSnapshot();
    const refused = await edit("Migrate\u0000 at night");
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.issues).toEqual([
      { path: "editedArgs.summary", message: "must not contain control characters" },
    ]);
    expect(await writeSnapshot()).toEqual(before);
    const edited = await edit("Migrate the database\nat night, with a backup first");
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.call.decision.editedArgs.summary).toBe(
      "Migrate the database\nat night, with a backup first",
    );
  });

  it("a lone surrogate anywhere in a body is refused with its path, data included", async () => {
    const before = await writeSnapshot();
    const call = refundBatch().calls[0];
    for (const [body, path] of [
      [
        { batch: refundBatch({ calls: [{ ...call, args: { note: "x\ud800" } }] }) },
        "batch.calls.0.args.note",
      ],
      [{ metadata: { ["k\udc00"]: 1 } }, "metadata.k\udc00"],
      [{ externalId: "\ud800" }, "externalId"],
      [
        { batch: refundBatch({ calls: [{ ...call, summary: "a\udfffb" }] }) },
        "batch.calls.0.summary",
      ],
    ] as const) {
      const answer = await answerOf(await send(agent, "POST", "/runs", body));
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "invalid_request", issues: [{ path }] });
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("reasons, summaries and names refuse control characters with a 400 naming the field", async () => {
    const { batch } = await pausedRun(agent, refundBatch());
    const callId = batch.calls[0].id;
    const cases: [ApiClient, string, string, unknown, string][] = [
      [
        asAdmin,
        "POST",
        `/calls/${callId}/decision`,
        { outcome: "reject", expectedRevision: 1, reason: "no\u0000" },
        "reason",
      ],
      [
        asAdmin,
        "POST",
        `/batches/${batch.id}/decision`,
        { outcome: "reject", expectedRevisions: { [callId]: 1 }, reason: "\u001b[2J" },
        "reason",
      ],
      [agent, "POST", `/batches/${batch.id}/cancel`, { reason: "bye\u0007" }, "reason"],
      [agent, "POST", `/runs/${batch.runId}/rollback`, { reason: "undo\u0000" }, "reason"],
      [
        agent,
        "POST",
        "/runs",
        { batch: { kind: "plan", plan: { summary: "plan\u0000" } } },
        "batch.plan.summary",
      ],
      [
        agent,
        "POST",
        "/runs",
        {
          batch: refundBatch({ calls: [{ ...refundBatch().calls[0], toolName: "refund\norder" }] }),
        },
        "batch.calls.0.toolName",
      ],
      [asAdmin, "POST", "/queues", { name: "Ops\u0000" }, "name"],
      [asAdmin, "PATCH", `/queues/${queue.id}`, { name: "Ops\u009b" }, "name"],
      [asAdmin, "POST", "/routing-rules", { name: "r\u0000", queue: queue.id }, "name"],
      [
        asAdmin,
        "POST",
        "/policy-rules",
        { name: "p", queue: queue.id, effect: "block", reason: "no\u0000" },
        "reason",
      ],
      [adminSession, "POST", "/agents", { name: "bot\u0000", defaultQueue: queue.id }, "name"],
      [asAdmin, "POST", "/views", { queueId: queue.id, name: "v\u0000", filters: {} }, "name"],
      [
        adminSession,
        "POST",
        "/people",
        { email: "nul@example.com", name: "n\u0000", queues: [{ queueId: queue.id }] },
        "name",
      ],
    ];
    for (const [client, method, path, body, field] of cases) {
      const before = await writeSnapshot();
      const answer = await answerOf(await send(client, method, path, body));
      const what = `${method} ${path} ${JSON.stringify(body)} → ${answer.status} ${JSON.stringify(answer.body)}`;
      expect(answer.status, what).toBe(400);
      expect(answer.body.error.code, what).toBe("invalid_request");
      expect(answer.body.error.issues, what).toContainEqual({
        path: field,
        message: expect.stringMatching(/control characters|one line/),
      });
      expect(await writeSnapshot(), what).toEqual(before);
    }
  });
});

describe("whatever was accepted, the answers stay strict JSON", () => {
  it("/audit, history exports and streams after a round of hostile writes", async () => {
    const person = await makeReviewer({ name: "Audra Person", queues: [{ name: queue.name }] });
    // the attacks of hole 6, whatever they are answered: what was stored must read back cleanly
    for (const name of ["x\ud800y", "\udfff", "a\u0000b", "Audra 👩‍💻"])
      await send(asAdmin, "PATCH", `/people/${person.id}`, { name });
    await send(adminSession, "POST", "/agents", { name: "bot\ud800", defaultQueue: queue.id });
    const hostile = (await pausedRun(agent, refundBatch())).batch;
    await send(asAdmin, "POST", `/calls/${hostile.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: hostile.calls[0].revision,
      reason: "lone \udc00 half",
    });
    await send(agent, "POST", "/runs", {
      batch: refundBatch({ calls: [{ ...refundBatch().calls[0], args: { note: "\ud800" } }] }),
    });
    // and what is accepted: control characters in data, tabs and line breaks in a reason
    const { batch } = await pausedRun(
      agent,
      refundBatch({ calls: [{ ...refundBatch().calls[0], args: { note: "a\u0000\u001b" } }] }),
    );
    const rejected = await asAdmin.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: batch.calls[0].revision,
      reason: "Not\tthis one.\nSorry.",
    });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);

    const get = (path: string, token = admin.token) =>
      fetch(`${server.baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    const audit = await get("/audit");
    expect(audit.status).toBe(200);
    const auditBody = expectStrictJson(await audit.arrayBuffer(), "/audit") as {
      events: { type: string }[];
    };
    expect(auditBody.events.some((e) => e.type === "person.renamed")).toBe(true);

    const exported = await get("/history/export?format=json");
    expect(exported.status).toBe(200);
    const { batches } = expectStrictJson(await exported.arrayBuffer(), "history export") as {
      batches: { calls: { decision: { reason: string } | null }[] }[];
    };
    expect(batches.flatMap((b) => b.calls.map((c) => c.decision?.reason))).toContain(
      "Not\tthis one.\nSorry.",
    );
    const csv = await get("/history/export?format=csv");
    expect(csv.status).toBe(200);
    const csvText = new TextDecoder("utf-8", { fatal: true }).decode(await csv.arrayBuffer());
    expect(csvText).not.toMatch(/\ufffd/);

    for (const [url, token] of [
      [`${server.baseUrl}/api/v1/runs/${batch.runId}/stream`, agentKey],
      [`${server.baseUrl}/api/v1/stream?queue=${queue.id}`, admin.token],
    ] as const) {
      const stream = await openSse(url, { token, lastEventId: 0 });
      await stream.waitFor((m) => m.event === "call.decided");
      stream.close();
      for (const message of stream.messages) {
        if (message.event === "resync") continue;
        const data = new TextEncoder().encode(JSON.stringify(message.data)).buffer;
        expectStrictJson(data, `${url} ${message.event}`);
      }
      expect(stream.raw()).not.toMatch(/\\u[dD][89abAB]/);
    }
  });
});
