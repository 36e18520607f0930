import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer } from "../support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import { waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { sessionCookie } from "@/test/support/sessions";

// GET /history and GET /history/export over real HTTP: the settled batches of a reviewer's
// queues, filtered and paged, and the same list as a CSV or JSON download.

let server: TestServer;
let queueA: { id: string; name: string };
let queueB: { id: string; name: string };
let dana: TestReviewer;
let sam: TestReviewer;
let olga: TestReviewer;
let supportKey: { id: string; key: string };
let deployKey: { id: string; key: string };
let asDana: ApiClient;
let asOlga: ApiClient;
let asNobody: ApiClient;
let support: ApiClient;

const FORMULA_REASON = '=HYPERLINK("http://evil.example","click")';
const QUOTED_REASON = 'Too big, "really"\nSecond line';

/** The batches Dana may see, in the order they were settled. */
const settled: Record<"b1" | "b2" | "b3" | "b4" | "b5" | "b6" | "b7", any> = {} as never;
let pendingBatch: any;
let otherQueueBatch: any;

function call(toolName: string, args: Record<string, unknown>) {
  return { toolCallId: `${toolName}-${Math.random().toString(36).slice(2, 8)}`, toolName, args };
}

async function created(client: ApiClient, batch: Record<string, unknown>) {
  const answer = await client.post("/runs", { batch });
  expect(answer.status).toBe(201);
  return answer.body.batches[0];
}

async function decide(
  client: ApiClient,
  target: { id: string; revision: number },
  body: Record<string, unknown>,
) {
  const answer = await client.post(`/calls/${target.id}/decision`, {
    expectedRevision: target.revision,
    ...body,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

const read = async (client: ApiClient, id: string) => (await client.get(`/batches/${id}`)).body;

beforeAll(async () => {
  server = await startApiServer("history");
  queueA = await makeQueue();
  queueB = await makeQueue();
  dana = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queueA.name }] });
  sam = await makeReviewer({ name: "Sam Second", queues: [{ name: queueA.name }] });
  olga = await makeReviewer({ name: "Olga Other", queues: [{ name: queueB.name }] });
  const nobody = await makeReviewer({ name: "Nina Nobody" });
  supportKey = await makeAgentKey({ name: "Support bot", queues: [queueA.name] });
  deployKey = await makeAgentKey({ name: "Deploy bot", queues: [queueA.name, queueB.name] });
  support = apiClient(server.baseUrl, supportKey.key);
  const deploy = apiClient(server.baseUrl, deployKey.key);
  asDana = apiClient(server.baseUrl, dana.token);
  const asSam = apiClient(server.baseUrl, sam.token);
  asOlga = apiClient(server.baseUrl, olga.token);
  asNobody = apiClient(server.baseUrl, nobody.token);

  // Settled one after another, so their decision times are in this order.
  let b = await created(support, { calls: [call("refund_order", { orderId: "A-1", amount: 25 })] });
  await decide(asDana, b.calls[0], { outcome: "approve", reason: "Customer is VIP" });
  settled.b1 = await read(asDana, b.id);

  b = await created(support, { calls: [call("delete_files", { paths: ["/tmp/a"] })] });
  await decide(asSam, b.calls[0], { outcome: "reject", reason: FORMULA_REASON });
  settled.b2 = await read(asDana, b.id);

  b = await created(deploy, {
    calls: [
      call("merge_pr", { repo: "acme/api", number: 7 }),
      call("refund_order", { amount: 900 }),
    ],
  });
  await decide(asDana, b.calls[0], { outcome: "approve" });
  await decide(asDana, b.calls[1], { outcome: "reject", reason: QUOTED_REASON });
  settled.b3 = await read(asDana, b.id);

  b = await created(support, { kind: "plan", plan: { summary: "Migrate the billing table" } });
  await decide(asDana, b.calls[0], { outcome: "approve" });
  settled.b4 = await read(asDana, b.id);

  b = await created(support, { calls: [call("update_ticket", { ticket: 1, status: "closed" })] });
  await decide(asDana, b.calls[0], {
    outcome: "edit",
    editedArgs: { ticket: 1, status: "pending" },
    reason: "+1 but keep it open",
  });
  settled.b5 = await read(asDana, b.id);

  b = await created(support, refundBatch());
  expect(
    (await support.post(`/batches/${b.id}/cancel`, { reason: "-withdrawn by user" })).status,
  ).toBe(200);
  settled.b6 = await read(asDana, b.id);

  b = await created(support, refundBatch({ timeoutSecs: 1 }));
  settled.b7 = await waitUntil(
    async () => {
      const now = await read(asDana, b.id);
      return now.status === "expired" ? now : null;
    },
    { timeoutMs: 10_000, what: "the deadline sweeper to expire the batch" },
  );

  pendingBatch = await created(support, refundBatch());
  otherQueueBatch = await created(deploy, refundBatch({ queue: queueB.name }));
  await decide(asOlga, otherQueueBatch.calls[0], { outcome: "approve" });
}, 90_000);
afterAll(() => server?.stop());

const newestFirst = () =>
  ["b7", "b6", "b5", "b4", "b3", "b2", "b1"].map((k) => settled[k as keyof typeof settled].id);

async function ids(client: ApiClient, query: string) {
  const answer = await client.get(`/history${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.batches.map((b: { id: string }) => b.id);
}

describe("GET /history", () => {
  it("lists the settled batches of the reviewer's queues, newest decision first", async () => {
    const answer = await asDana.get("/history");
    expect(answer.status).toBe(200);
    expect(answer.body.nextCursor).toBeNull();
    expect(answer.body.batches.map((b: { id: string }) => b.id)).toEqual(newestFirst());
    const statuses = answer.body.batches.map((b: { status: string }) => b.status);
    expect(statuses).toEqual([
      "expired",
      "cancelled",
      "decided",
      "decided",
      "decided",
      "decided",
      "decided",
    ]);
    const times = answer.body.batches.map((b: { decidedAt: string }) => Date.parse(b.decidedAt));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    // pending batches and other queues' batches are not history of this reviewer
    expect(answer.body.batches.map((b: { id: string }) => b.id)).not.toContain(pendingBatch.id);
    expect(answer.body.batches.map((b: { id: string }) => b.id)).not.toContain(otherQueueBatch.id);
  });

  it("says, for each call, who decided, when, the outcome and the reason", async () => {
    const { body } = await asDana.get("/history");
    const byId = new Map(body.batches.map((b: any) => [b.id, b]));
    const rejected: any = byId.get(settled.b2.id);
    expect(rejected).toMatchObject({ outcome: "rejected", agent: { name: "Support bot" } });
    expect(rejected.calls[0].decision).toMatchObject({
      outcome: "rejected",
      source: "reviewer",
      by: { id: sam.id, name: "Sam Second" },
      reason: FORMULA_REASON,
    });
    expect(Date.parse(rejected.calls[0].decision.at)).toBeGreaterThan(0);
    const mixed: any = byId.get(settled.b3.id);
    expect(mixed.outcome).toBe("mixed");
    expect(
      mixed.calls.map((c: any) => [c.toolName, c.decision.outcome, c.decision.by.name]),
    ).toEqual([
      ["merge_pr", "approved", "Dana Reviewer"],
      ["refund_order", "rejected", "Dana Reviewer"],
    ]);
    const edited: any = byId.get(settled.b5.id);
    expect(edited.calls[0].decision.editedArgs).toEqual({ ticket: 1, status: "pending" });
    const expired: any = byId.get(settled.b7.id);
    expect(expired.calls[0].decision).toMatchObject({
      outcome: "rejected",
      source: "timeout",
      by: null,
    });
  });

  it("filters by queue, agent, tool, outcome, decider, kind and status", async () => {
    const [b1, b2, b3, b4, b5, b6, b7] = ["b1", "b2", "b3", "b4", "b5", "b6", "b7"].map(
      (k) => settled[k as keyof typeof settled].id,
    );
    expect(await ids(asDana, `?queue=${queueA.id}`)).toEqual(newestFirst());
    expect(await ids(asDana, `?agent=${deployKey.id}`)).toEqual([b3]);
    expect(await ids(asDana, `?tool=merge_pr`)).toEqual([b3]);
    expect(await ids(asDana, `?tool=refund_order`)).toEqual([b7, b6, b3, b1]);
    expect(await ids(asDana, `?outcome=approved`)).toEqual([b5, b4, b1]);
    expect(await ids(asDana, `?outcome=rejected`)).toEqual([b7, b2]);
    expect(await ids(asDana, `?outcome=mixed`)).toEqual([b3]);
    expect(await ids(asDana, `?decidedBy=${sam.id}`)).toEqual([b2]);
    expect(await ids(asDana, `?kind=plan`)).toEqual([b4]);
    expect(await ids(asDana, `?status=expired`)).toEqual([b7]);
    expect(await ids(asDana, `?status=cancelled`)).toEqual([b6]);
    expect(await ids(asDana, `?outcome=approved&agent=${supportKey.id}&kind=action`)).toEqual([
      b5,
      b1,
    ]);
    expect(await ids(asDana, `?tool=no_such_tool`)).toEqual([]);
    // a GET form sends empty fields; they filter nothing
    expect(await ids(asDana, `?queue=&agent=&tool=&outcome=&from=&to=`)).toEqual(newestFirst());
  });

  it("filters by decision time: whole UTC days, or exact ISO times", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(await ids(asDana, `?from=${today}`)).toEqual(newestFirst());
    expect(await ids(asDana, `?from=${yesterday}&to=${today}`)).toEqual(newestFirst());
    expect(await ids(asDana, `?to=${yesterday}`)).toEqual([]);
    const from = encodeURIComponent(settled.b4.decidedAt);
    expect(await ids(asDana, `?from=${from}`)).toEqual(newestFirst().slice(0, 4));
    const to = encodeURIComponent(settled.b2.decidedAt);
    expect(await ids(asDana, `?to=${to}`)).toEqual([settled.b2.id, settled.b1.id]);
  });

  it("pages with a cursor, each batch once", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const answer: any = await asDana.get(
        `/history?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(answer.status).toBe(200);
      sizes.push(answer.body.batches.length);
      seen.push(...answer.body.batches.map((b: { id: string }) => b.id));
      cursor = answer.body.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(newestFirst());
    // filters hold across pages
    const first = await asDana.get(`/history?limit=1&outcome=rejected`);
    const second = await asDana.get(
      `/history?limit=1&outcome=rejected&cursor=${first.body.nextCursor}`,
    );
    expect([...first.body.batches, ...second.body.batches].map((b: any) => b.id)).toEqual([
      settled.b7.id,
      settled.b2.id,
    ]);
    expect(second.body.nextCursor).toBeNull();
  });

  it("merges several queues' histories, newest decision first, each batch once", async () => {
    // Each queue is read as its own page and the pages merged (lib/batches/merge-pages.ts): the
    // order and the cursor must hold across queues, for history and the queue's decided list.
    const both = await makeReviewer({ queues: [{ name: queueA.name }, { name: queueB.name }] });
    const asBoth = apiClient(server.baseUrl, both.token);
    const visible = await Promise.all(
      [...Object.values(settled), otherQueueBatch].map((b) => read(asBoth, b.id)),
    );
    const byDecision = [...visible]
      .sort((a, b) => Date.parse(b.decidedAt) - Date.parse(a.decidedAt) || (a.id < b.id ? 1 : -1))
      .map((b) => b.id);
    const byCreation = visible.map((b) => b.id).sort((a, b) => (a < b ? 1 : -1));

    const walk = async (path: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const answer: any = await asBoth.get(
          `${path}limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        seen.push(...answer.body.batches.map((b: { id: string }) => b.id));
        cursor = answer.body.nextCursor;
      } while (cursor);
      return seen;
    };
    expect(await walk("/history?")).toEqual(byDecision);
    // the queue's "decided" list holds decisions (and deadlines), not withdrawn batches
    const withdrawn = visible.filter((b) => b.status === "cancelled").map((b) => b.id);
    expect(withdrawn).toEqual([settled.b6.id]);
    expect(await walk("/queue?status=decided&")).toEqual(
      byCreation.filter((id) => !withdrawn.includes(id)),
    );
    expect(await walk("/queue?status=cancelled&")).toEqual(withdrawn);
  });

  it("refuses bad filters with 400 invalid_request, listing every issue", async () => {
    const answer = await asDana.get(
      "/history?outcome=maybe&kind=both&from=2025-13-01&limit=0&decidedBy=" + "x".repeat(300),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    const paths = answer.body.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["outcome", "kind", "from", "limit", "decidedBy"]),
    );

    const backwards = await asDana.get("/history?from=2025-03-02&to=2025-03-01");
    expect(backwards.status).toBe(400);
    expect(backwards.body.error.issues).toEqual([
      { path: "from", message: "'from' is after 'to'" },
    ]);

    const cursor = await asDana.get("/history?cursor=bm90LWEtY3Vyc29y");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.issues[0].path).toBe("cursor");
  });

  it("shows a reviewer only their own queues' history", async () => {
    expect(await ids(asOlga, "")).toEqual([otherQueueBatch.id]);
    expect(await ids(asNobody, "")).toEqual([]);
    // another team's queue is not found, as if it did not exist
    const foreign = await asDana.get(`/history?queue=${queueB.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
    // another team's reviewer or agent, as a filter, simply matches nothing here
    expect(await ids(asDana, `?decidedBy=${olga.id}`)).toEqual([]);
  });

  it("is for reviewers: 403 for an agent key, 401 without credentials", async () => {
    const agent = await support.get("/history");
    expect(agent.status).toBe(403);
    expect(agent.body.error.code).toBe("forbidden");
    const anonymous = await apiClient(server.baseUrl).get("/history");
    expect(anonymous.status).toBe(401);
  });

  it("works with the web app's session cookie", async () => {
    const cookie = await sessionCookie(server.baseUrl, dana.email);
    const anonymous = apiClient(server.baseUrl);
    const answer = await anonymous.get("/history?limit=2", { cookie });
    expect(answer.status).toBe(200);
    expect(answer.body.batches.map((b: { id: string }) => b.id)).toEqual(newestFirst().slice(0, 2));
    const file = await anonymous.raw("/history/export?format=csv", { headers: { cookie } });
    expect(file.status).toBe(200);
  });
});

describe("the OpenAPI document", () => {
  it("documents both endpoints, their filters, and the export's media types", async () => {
    const doc = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json();
    const list = doc.paths["/history"].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        "queue",
        "agent",
        "tool",
        "outcome",
        "decidedBy",
        "from",
        "to",
        "kind",
        "cursor",
        "limit",
      ]),
    );
    expect(list.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/HistoryPage",
    );
    const file = doc.paths["/history/export"].get;
    expect(file.parameters.map((p: { name: string }) => p.name)).toContain("format");
    expect(Object.keys(file.responses["200"].content).sort()).toEqual([
      "application/json",
      "text/csv",
    ]);
    expect(doc.components.schemas.HistoryPage).toBeDefined();
  });
});

/** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks; records end in CRLF. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      record.push(field);
      field = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i++;
    } else field += ch;
  }
  if (field || record.length) throw new Error("the CSV does not end with CRLF");
  return records;
}

const COLUMNS = [
  "decidedAt",
  "queue",
  "agent",
  "runId",
  "batchId",
  "kind",
  "toolName",
  "outcome",
  "source",
  "decidedBy",
  "decidedById",
  "decidedByEmail",
  "reason",
  "edited",
  "args",
  "editedArgs",
  "callId",
  "toolCallId",
  "requestedAt",
  "batchStatus",
  "batchOutcome",
  "planSummary",
  "editedPlanSummary",
  "chainSeq",
  "chainHash",
];

/** ISO 8601 UTC with milliseconds, as every time in an export is written */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function exportCsv(client: ApiClient, query = "") {
  const response = await client.raw(`/history/export?format=csv${query}`);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const [header, ...lines] = parseCsv(text);
  expect(header).toEqual(COLUMNS);
  // the last line is the signed chain head (test/trust/signed-exports.test.ts checks it)
  expect(lines.at(-1)![0]).toBe("#chain-head");
  const rows = lines.slice(0, -1);
  return {
    response,
    text,
    rows: rows.map((r) => Object.fromEntries(COLUMNS.map((c, i) => [c, r[i]]))),
  };
}

describe("GET /history/export", () => {
  it("downloads a CSV, one row per call, newest decision first", async () => {
    const { response, rows } = await exportCsv(asDana);
    const today = new Date().toISOString().slice(0, 10);
    expect(response.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="countersign-history-${today}.csv"`,
    );
    expect(response.headers.get("x-countersign-export-limit")).toBe("50000");
    expect(response.headers.get("x-countersign-export-truncated")).toBe("false");
    expect(rows.map((r) => [r.batchId, r.toolName, r.outcome])).toEqual([
      [settled.b7.id, "refund_order", "rejected"],
      [settled.b6.id, "refund_order", "cancelled"],
      [settled.b5.id, "update_ticket", "approved"],
      [settled.b4.id, "plan", "approved"],
      [settled.b3.id, "merge_pr", "approved"],
      [settled.b3.id, "refund_order", "rejected"],
      [settled.b2.id, "delete_files", "rejected"],
      [settled.b1.id, "refund_order", "approved"],
    ]);
    expect(rows.at(-1)).toEqual({
      decidedAt: settled.b1.calls[0].decision.at,
      queue: queueA.name,
      agent: "Support bot",
      runId: settled.b1.runId,
      batchId: settled.b1.id,
      kind: "action",
      toolName: "refund_order",
      outcome: "approved",
      source: "reviewer",
      decidedBy: "Dana Reviewer",
      decidedById: dana.id,
      decidedByEmail: dana.email,
      reason: "Customer is VIP",
      edited: "no",
      args: JSON.stringify({ orderId: "A-1", amount: 25 }),
      editedArgs: "",
      callId: settled.b1.calls[0].id,
      toolCallId: settled.b1.calls[0].toolCallId,
      requestedAt: settled.b1.createdAt,
      batchStatus: "decided",
      batchOutcome: "approved",
      planSummary: "",
      editedPlanSummary: "",
      // the call's last event: its place in the event log's hash chain
      chainSeq: expect.stringMatching(/^\d+$/),
      chainHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(rows[0]).toMatchObject({ source: "timeout", decidedBy: "", kind: "action" });
    expect(rows[3]).toMatchObject({ kind: "plan", decidedBy: "Dana Reviewer" });
  });

  it("names every call, its batch's outcome beside its own, plans' summaries, times to the ms", async () => {
    const { rows } = await exportCsv(asDana);
    // a mixed batch: which call was rejected, by id
    const mixed = rows.filter((r) => r.batchId === settled.b3.id);
    expect(mixed.map((r) => [r.callId, r.toolName, r.outcome, r.batchOutcome])).toEqual([
      [settled.b3.calls[0].id, "merge_pr", "approved", "mixed"],
      [settled.b3.calls[1].id, "refund_order", "rejected", "mixed"],
    ]);
    expect(new Set(rows.map((r) => r.callId)).size).toBe(rows.length);
    expect(rows.find((r) => r.batchId === settled.b4.id)).toMatchObject({
      kind: "plan",
      planSummary: "Migrate the billing table",
      editedPlanSummary: "",
    });
    expect(rows.find((r) => r.batchId === settled.b6.id)).toMatchObject({
      batchStatus: "cancelled",
      outcome: "cancelled",
    });
    for (const row of rows) {
      expect(row.decidedAt).toMatch(ISO_MS);
      expect(row.requestedAt).toMatch(ISO_MS);
    }

    // a plan approved with an edited summary: both summaries, and who edited it (a queue of
    // its own, so the other tests' lists stay as they are)
    const planQueue = await makeQueue();
    const pia = await makeReviewer({ name: "Pia Planner", queues: [{ name: planQueue.name }] });
    const planner = await makeAgentKey({ name: "Planner", queues: [planQueue.name] });
    const asPia = apiClient(server.baseUrl, pia.token);
    const plan = await created(apiClient(server.baseUrl, planner.key), {
      kind: "plan",
      plan: { summary: "Drop the old tables", risks: ["data loss"] },
    });
    await decide(asPia, plan.calls[0], {
      outcome: "edit",
      editedArgs: { summary: "Archive the old tables first", risks: ["data loss"] },
    });
    const pias = await exportCsv(asPia);
    expect(pias.rows).toHaveLength(1);
    expect(pias.rows[0]).toMatchObject({
      callId: plan.calls[0].id,
      planSummary: "Drop the old tables",
      editedPlanSummary: "Archive the old tables first",
      edited: "yes",
      decidedById: pia.id,
      decidedByEmail: pia.email,
    });

    // JSON: every time, however deep, to the millisecond
    const json = (await (await asDana.raw("/history/export?format=json")).json()).batches;
    const times: string[] = [];
    const walk = (value: unknown, key = "") => {
      if (typeof value === "string" && /(At|^at)$/.test(key)) times.push(value);
      else if (Array.isArray(value)) value.forEach((v) => walk(v));
      else if (value && typeof value === "object")
        for (const [k, v] of Object.entries(value)) walk(v, k);
    };
    walk(json);
    expect(times.length).toBeGreaterThan(20);
    for (const time of times) expect(time).toMatch(ISO_MS);
    expect(json[0].calls[0]).toHaveProperty("id");
  });

  it("quotes by RFC 4180 and defuses cells a spreadsheet would run as formulas", async () => {
    const { text, rows } = await exportCsv(asDana);
    const byTool = (batch: string, tool: string) =>
      rows.find((r) => r.batchId === batch && r.toolName === tool)!;
    // = + - @ at the start of a cell become text with a leading quote
    expect(byTool(settled.b2.id, "delete_files").reason).toBe(`'${FORMULA_REASON}`);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
    expect(byTool(settled.b5.id, "update_ticket").reason).toBe("'+1 but keep it open");
    expect(byTool(settled.b6.id, "refund_order")).toMatchObject({
      reason: "'-withdrawn by user",
      source: "agent",
    });
    // commas, quotes and line breaks survive inside one quoted field
    expect(byTool(settled.b3.id, "refund_order").reason).toBe(QUOTED_REASON);
    expect(text).toContain(`"Too big, ""really""\nSecond line"`);
    // an edit: what the agent asked, and what was approved
    expect(byTool(settled.b5.id, "update_ticket")).toMatchObject({
      edited: "yes",
      args: JSON.stringify({ ticket: 1, status: "closed" }),
      editedArgs: JSON.stringify({ ticket: 1, status: "pending" }),
    });
    expect(text.startsWith(`${COLUMNS.join(",")}\r\n`)).toBe(true);
  });

  it("exports only what the filters match", async () => {
    const { rows } = await exportCsv(asDana, "&outcome=mixed");
    expect(rows.map((r) => r.toolName)).toEqual(["merge_pr", "refund_order"]);
    const none = await exportCsv(asDana, "&tool=no_such_tool");
    expect(none.rows).toEqual([]);
  });

  it("downloads JSON: the batches as GET /history shows them, with the deciders' emails", async () => {
    const response = await asDana.raw("/history/export?format=json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const today = new Date().toISOString().slice(0, 10);
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="countersign-history-${today}.json"`,
    );
    const { batches: exported, chainHead } = await response.json();
    expect(chainHead).toMatchObject({ seq: expect.any(Number), hash: expect.any(String) });
    const listed = (await asDana.get("/history")).body.batches;
    // An auditor's file names each decider and voter by id, name and email as recorded then.
    const emails = new Map([dana, sam].map((r) => [r.id, r.email]));
    // each batch also names its last event's place in the hash chain
    for (const batch of exported) expect(batch.chain.hash).toMatch(/^[0-9a-f]{64}$/);
    const withoutEmails = exported.map(({ chain: _chain, ...batch }: any) => ({
      ...batch,
      calls: batch.calls.map((call: any) => {
        const { email: decider, ...by } = call.decision?.by ?? {};
        if (call.decision?.by) expect(decider).toBe(emails.get(by.id));
        return {
          ...call,
          votes: call.votes.map(({ reviewer: { email, ...reviewer }, ...vote }: any) => {
            expect(email).toBe(emails.get(reviewer.id));
            return { ...vote, reviewer };
          }),
          decision: call.decision && { ...call.decision, by: call.decision.by && by },
        };
      }),
    }));
    expect(withoutEmails).toEqual(listed);

    const empty = await asOlga.raw("/history/export?format=json&outcome=rejected");
    expect((await empty.json()).batches).toEqual([]);
  });

  it("refuses a bad format or filter before sending anything, and agent keys", async () => {
    const format = await asDana.get("/history/export?format=xml");
    expect(format.status).toBe(400);
    expect(format.body.error.issues[0].path).toBe("format");
    const filter = await asDana.get("/history/export?from=yesterday");
    expect(filter.status).toBe(400);
    const foreign = await asDana.get(`/history/export?queue=${queueB.id}`);
    expect(foreign.status).toBe(404);
    const agent = await support.get("/history/export");
    expect(agent.status).toBe(403);
    const olgas = await exportCsv(asOlga);
    expect(olgas.rows.map((r) => r.batchId)).toEqual([otherQueueBatch.id]);
  });

  it("stops at the cap, with whole batches, and says so", async () => {
    // A second server over the same database, with a cap of 5 calls.
    const capped = await startServer({
      databaseUrl: process.env.DATABASE_URL!,
      env: { HISTORY_EXPORT_CALL_LIMIT: "5" },
    });
    try {
      const client = apiClient(capped.baseUrl, dana.token);
      const { response, rows } = await exportCsv(client);
      expect(response.headers.get("x-countersign-export-limit")).toBe("5");
      expect(response.headers.get("x-countersign-export-truncated")).toBe("true");
      expect(response.headers.get("x-countersign-matching-calls")).toBe("8");
      expect(response.headers.get("content-disposition")).toMatch(/-partial\.csv"$/);
      // b7, b6, b5, b4: four calls; b3's two more would pass five
      expect([...new Set(rows.map((r) => r.batchId))]).toEqual(newestFirst().slice(0, 4));
      const json = (await (await client.raw("/history/export?format=json")).json()).batches;
      expect(json.map((b: { id: string }) => b.id)).toEqual(newestFirst().slice(0, 4));
    } finally {
      await capped.stop();
    }
  });
});
