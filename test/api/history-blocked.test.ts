import { CSV_HEAD_MARK } from "@/lib/audit/signed-export";
import { beforeAll, describe, expect, it } from "vitest";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import type { AgentActor, Actor } from "@/lib/auth/actor";
import { decideCall } from "@/lib/approvals/decide-call";
import { exportHistory } from "@/lib/history/export-history";
import { listHistory } from "@/lib/history/list-history";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { OPERATOR } from "@/lib/queues/queue-access";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// A call a policy blocked is a decision too (source `policy`): History lists it, its filter finds
// it, and the CSV and JSON exports carry its row, for a batch blocked whole (which no queue ever
// showed) and for the blocked call of a mixed batch (README: one row per call).

let reviewer: Actor;
let agent: AgentActor;
let blockedWhole: BatchView;
let mixed: BatchView;

const call = (toolCallId: string, toolName: string, args: Record<string, unknown>) => ({
  toolCallId,
  toolName,
  args,
});

async function pause(calls: ReturnType<typeof call>[]) {
  const { run } = await createRun(agent, { batch: { calls } });
  return run.batches![0]!;
}

async function text(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}

beforeAll(async () => {
  await freshDatabase("history-blocked");
  const queue = await makeQueue();
  const person = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queue.name }] });
  reviewer = { kind: "reviewer", id: person.id, name: person.name, email: person.email };
  const key = await makeAgentKey({ name: "Files bot", queues: [queue.name] });
  agent = {
    kind: "agent",
    id: key.id,
    name: "Files bot",
    defaultQueueId: queue.id,
    queueIds: [queue.id],
    ownerUserId: null,
    mode: "ask",
  };
  await createPolicyRule(OPERATOR, {
    queue: queue.id,
    name: "No env files",
    effect: "deny",
    toolPattern: "delete_files",
    argPredicates: [{ path: "paths[*]", op: "glob", value: "*.env*" }],
    reason: "Environment files hold secrets.",
  });
  blockedWhole = await pause([call("d1", "delete_files", { paths: ["a", ".env.staging"] })]);
  mixed = await pause([
    call("r1", "read_file", { path: "README.md" }),
    call("d2", "delete_files", { paths: [".env"] }),
  ]);
  // A reviewer decides the call the policy left them; the batch settles as mixed.
  const readCall = mixed.calls.find((c) => c.toolName === "read_file")!;
  await decideCall(reviewer, readCall.id, { outcome: "approve", expectedRevision: 1 });
});

describe("History with calls a policy blocked", () => {
  it("the batches are what the agent was told: blocked whole, and one call of the mixed one", async () => {
    expect(blockedWhole).toMatchObject({ status: "decided", outcome: "rejected" });
    expect(mixed.status).toBe("pending");
    const page = await listHistory(reviewer, {});
    expect(page.batches.find((b) => b.id === mixed.id)).toMatchObject({
      status: "decided",
      outcome: "mixed",
    });
  });

  it("lists the mixed batch with both its calls, the blocked one among them", async () => {
    const page = await listHistory(reviewer, {});
    const row = page.batches.find((b) => b.id === mixed.id)!;
    expect(row.calls.map((c) => [c.toolName, c.decision?.source, c.decision?.outcome])).toEqual([
      ["read_file", "reviewer", "approved"],
      ["delete_files", "policy", "rejected"],
    ]);
  });

  it("lists the batch blocked whole, with its blocked call, decided by policy", async () => {
    const page = await listHistory(reviewer, {});
    const row = page.batches.find((b) => b.id === blockedWhole.id);
    expect(row).toBeDefined();
    expect(row!.calls).toHaveLength(1);
    expect(row!.calls[0]!.decision).toMatchObject({
      outcome: "rejected",
      source: "policy",
      policy: { blocked: true, rule: { name: "No env files" } },
    });
  });

  it("filters by how a call was decided: source=policy finds it, source=reviewer does not", async () => {
    const byPolicy = await listHistory(reviewer, { source: "policy" });
    expect(byPolicy.batches.map((b) => b.id).sort()).toEqual([blockedWhole.id, mixed.id].sort());
    const byReviewer = await listHistory(reviewer, { source: "reviewer" });
    expect(byReviewer.batches.map((b) => b.id)).toEqual([mixed.id]);
    const byDeadline = await listHistory(reviewer, { source: "timeout" });
    expect(byDeadline.batches).toEqual([]);
    await expect(listHistory(reviewer, { source: "someone" })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });

  it("exports a row per call, blocked calls included, in CSV and JSON", async () => {
    const csv = await exportHistory(reviewer, { format: "csv" });
    expect(csv.matchingCalls).toBe(3);
    const lines = (await text(csv.body)).trim().split("\r\n");
    const header = lines[0]!.split(",");
    // the last line is the signed chain head, not a call
    expect(lines.at(-1)).toMatch(new RegExp(`^${CSV_HEAD_MARK},`));
    const rows = lines.slice(1, -1).map((line) => line.split(","));
    const blockedRow = rows.find((r) => r[header.indexOf("batchId")] === blockedWhole.id);
    expect(blockedRow).toBeDefined();
    expect(blockedRow![header.indexOf("outcome")]).toBe("rejected");
    expect(blockedRow![header.indexOf("source")]).toBe("policy");
    expect(blockedRow![header.indexOf("toolName")]).toBe("delete_files");
    const mixedRows = rows.filter((r) => r[header.indexOf("batchId")] === mixed.id);
    expect(mixedRows.map((r) => r[header.indexOf("source")]).sort()).toEqual([
      "policy",
      "reviewer",
    ]);
    expect(rows).toHaveLength(3);

    const json = await exportHistory(reviewer, { format: "json", source: "policy" });
    expect(await text(json.body)).toContain('"blocked":true');
  });
});
