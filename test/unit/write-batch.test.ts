import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/db/client";
import {
  changedRow,
  guard,
  PREVIOUS_CHANGED,
  StateMoved,
  statement,
  untilWritten,
  writeBatch,
} from "@/db/write-batch";
import {
  checkVotesChecked,
  planDecision,
  readDecisionState,
  type DecisionState,
} from "@/lib/approvals/plan-decision";
import { decideCall } from "@/lib/approvals/decide-call";
import { authenticate, type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { planSettlement } from "@/lib/batches/settle-batch";
import { ConflictError } from "@/lib/errors";
import { commit } from "@/lib/events/commit";
import { metrics } from "@/lib/metrics/metrics";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { makeQueue, makeReviewer, makeAgentKey } from "../support/factories";

// The write path's shape (db/write-batch.ts): reads first, then one batch whose statements
// re-check in SQL what the reads found. These tests interleave two writers by hand — both read,
// one commits, then the other — which is the race a real deployment meets between its
// instances, and check that the late writer changes nothing and then gets the answer the
// winner's state deserves.

let databaseUrl: string;
let agent: AgentActor;
let dana: ReviewerActor;
let sam: ReviewerActor;
let quorumAgent: AgentActor;

const as = (token: string) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));

beforeAll(async () => {
  databaseUrl = await freshDatabase("write-batch");
  const queue = await makeQueue({});
  const quorumQueue = await makeQueue({ requiredApprovals: 2 });
  const queues = [{ name: queue.name }, { name: quorumQueue.name }];
  const d = await makeReviewer({ name: "Dana Reviewer", queues });
  const s = await makeReviewer({ name: "Sam Reviewer", queues });
  agent = (await as((await makeAgentKey({ queues: [queue.name] })).key)) as AgentActor;
  quorumAgent = (await as((await makeAgentKey({ queues: [quorumQueue.name] })).key)) as AgentActor;
  dana = (await as(d.token)) as ReviewerActor;
  sam = (await as(s.token)) as ReviewerActor;
});

afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

async function pause(by: AgentActor, tools: string[]) {
  const { run } = await createRun(by, {
    batch: {
      calls: tools.map((toolName, i) => ({ toolCallId: `t${i}`, toolName, args: { i } })),
    },
  });
  return run.batches![0]!;
}

const readFor = (reviewer: ReviewerActor, callId: string): Promise<DecisionState> =>
  readDecisionState(reviewer, { callId });

function writesOf(state: DecisionState, reviewer: ReviewerActor) {
  return [
    ...state.writes,
    ...planSettlement(state.rows, { ...reviewer, kind: "reviewer" }, state.now),
  ];
}

async function value(sql: string, ...args: string[]): Promise<unknown> {
  const [result] = await writeBatch([{ sql, args }]);
  return result!.rows[0]![0];
}
const count = async (sql: string, ...args: string[]) => Number(await value(sql, ...args));

describe("guards", () => {
  it("abort the whole batch when the write before them changed nothing", async () => {
    await writeBatch([
      statement("create table if not exists scratch (id text primary key, n int)"),
    ]);
    await writeBatch([statement("insert into scratch values ('a', 0)")]);
    await expect(
      writeBatch([
        statement("insert into scratch values ('b', 0)"),
        statement("update scratch set n = 1 where id = 'a' and n = 5"),
        changedRow(),
      ]),
    ).rejects.toBeInstanceOf(StateMoved);
    expect(await count("select count(*) from scratch where id = 'b'")).toBe(0);
    // The aborted batch leaves nothing unfinished behind: a batch of other statements commits.
    await writeBatch([statement("insert into scratch values ('c', 0)")]);
    expect(await count("select count(*) from scratch where id = 'c'")).toBe(1);
    await writeBatch([
      statement("update scratch set n = 1 where id = 'a' and n = 0"),
      changedRow(),
      guard("(select n from scratch where id = ?) = 1", "a"),
    ]);
    expect(await count("select n from scratch where id = 'a'")).toBe(1);
    expect(await count("select count(*) from write_guards")).toBe(0);
  });

  it("are counted by result in the histogram /metrics serves (db/write-metrics.ts)", async () => {
    const served = async (result: string) => {
      const text = await metrics().registry.metrics();
      const line = `countersign_write_batch_duration_seconds_count{result="${result}"}`;
      return Number(
        text
          .split("\n")
          .find((l) => l.startsWith(`${line} `))
          ?.slice(line.length) ?? 0,
      );
    };
    const [committed, moved] = [await served("committed"), await served("moved")];
    await writeBatch([
      statement("create table if not exists scratch (id text primary key, n int)"),
    ]);
    await expect(
      writeBatch([statement("update scratch set n = n where id = 'none'"), changedRow()]),
    ).rejects.toBeInstanceOf(StateMoved);
    expect([await served("committed"), await served("moved")]).toEqual([committed + 1, moved + 1]);
  });

  it("untilWritten runs the attempt again after a guard, and passes other errors on", async () => {
    let attempts = 0;
    const result = await untilWritten(async () => {
      attempts++;
      if (attempts < 3) throw new StateMoved();
      return "written";
    });
    expect({ result, attempts }).toEqual({ result: "written", attempts: 3 });
    await expect(
      untilWritten(async () => {
        throw new ConflictError("not_pending", "no", null);
      }),
    ).rejects.toBeInstanceOf(ConflictError);
  });
});

describe("a decision built on a stale read", () => {
  it("writes nothing, and the retry answers 409 naming the winner", async () => {
    const batch = await pause(agent, ["refund"]);
    const callId = batch.calls[0]!.id;
    const late = await readFor(sam, callId);
    const early = await readFor(dana, callId);
    planDecision(early, callId, { outcome: "approve", expectedRevision: 1 });
    await commit(writesOf(early, dana));
    const events = await count("select count(*) from events where call_id = ?", callId);

    planDecision(late, callId, { outcome: "reject", expectedRevision: 1, reason: "too late" });
    await expect(commit(writesOf(late, sam))).rejects.toBeInstanceOf(StateMoved);
    expect(await count("select count(*) from votes where call_id = ?", callId)).toBe(1);
    expect(await count("select count(*) from events where call_id = ?", callId)).toBe(events);

    const answer = await decideCall(sam, callId, { outcome: "reject", expectedRevision: 1 }).catch(
      (error: unknown) => error,
    );
    expect(answer).toBeInstanceOf(ConflictError);
    expect(answer).toMatchObject({
      code: "already_decided",
      message: expect.stringMatching(/^Approved by Dana Reviewer/),
    });
    expect((answer as ConflictError).extra.current).toMatchObject({
      status: "approved",
      decision: { by: { name: "Dana Reviewer" } },
    });
  });

  it("cannot leave a batch unsettled when two reviewers decide its last two calls", async () => {
    const batch = await pause(agent, ["refund", "email"]);
    const [first, second] = batch.calls.map((c) => c.id) as [string, string];
    // Each reads the other's call as pending, so each would leave the settling to the other.
    const a = await readFor(dana, first);
    const b = await readFor(sam, second);
    planDecision(b, second, { outcome: "approve", expectedRevision: 1 });
    await commit(writesOf(b, sam));
    planDecision(a, first, { outcome: "reject", expectedRevision: 1 });
    await expect(commit(writesOf(a, dana))).rejects.toBeInstanceOf(StateMoved);

    const { batch: settled } = await decideCall(dana, first, {
      outcome: "reject",
      expectedRevision: 1,
    });
    expect(settled).toMatchObject({ status: "decided", outcome: "mixed" });
    expect(await value("select status from runs where id = ?", batch.runId)).toBe("ready");
    expect(
      await count(
        "select count(*) from events where batch_id = ? and type = 'batch.decided'",
        batch.id,
      ),
    ).toBe(1);
  });

  it("counts one reviewer's vote once when two of their tabs vote from the same read", async () => {
    const batch = await pause(quorumAgent, ["deploy"]);
    const callId = batch.calls[0]!.id;
    // Both tabs see no vote yet; the second one's vote is a no-op that must abort its batch.
    const first = await readFor(dana, callId);
    const second = await readFor(dana, callId);
    const third = await readFor(dana, callId);
    planDecision(first, callId, { outcome: "approve", expectedRevision: 1 });
    await commit(writesOf(first, dana));
    planDecision(second, callId, { outcome: "approve", expectedRevision: 1 });
    await expect(commit(writesOf(second, dana))).rejects.toBeInstanceOf(StateMoved);
    // a rejection from the same stale read would decide the call on a vote that was not cast
    planDecision(third, callId, { outcome: "reject", expectedRevision: 1, reason: "second tab" });
    await expect(commit(writesOf(third, dana))).rejects.toBeInstanceOf(StateMoved);

    expect(await count("select count(*) from votes where call_id = ?", callId)).toBe(1);
    expect(
      await count("select count(*) from events where call_id = ? and type = 'call.voted'", callId),
    ).toBe(1);
    expect(await value("select status from calls where id = ?", callId)).toBe("pending");
    await expect(
      decideCall(dana, callId, { outcome: "approve", expectedRevision: 1 }),
    ).rejects.toMatchObject({ code: "already_decided" });
  });

  it("plans every vote with the statement that checks it inserted right after it", async () => {
    const decisions = [
      { outcome: "reject", expectedRevision: 1, reason: "no" },
      { outcome: "approve", expectedRevision: 1 },
      { outcome: "edit", expectedRevision: 1, editedArgs: { amount: 1 } },
    ] as const;
    for (const actor of [agent, quorumAgent]) {
      for (const decision of decisions) {
        const batch = await pause(actor, ["refund"]);
        const callId = batch.calls[0]!.id;
        const state = await readFor(dana, callId);
        planDecision(state, callId, decision);
        const at = state.writes.findIndex((w) => w.sql.startsWith('insert into "votes"'));
        expect(at, `${decision.outcome}: a vote`).toBeGreaterThanOrEqual(0);
        expect(state.writes[at + 1]!.sql, decision.outcome).toContain(PREVIOUS_CHANGED);
      }
    }
    // a write pushed between a vote and its check would make the check read that write's count
    const vote = { sql: 'insert into "votes" ("id") values (?) on conflict do nothing', args: [] };
    const event = { sql: "insert into events (seq) values (1)", args: [] };
    expect(() => checkVotesChecked([vote, event])).toThrow(/followed by the statement/);
    expect(() => checkVotesChecked([vote])).toThrow(/followed by the statement/);
  });

  it("counts a quorum's votes as they are when the batch runs", async () => {
    const batch = await pause(quorumAgent, ["deploy"]);
    const callId = batch.calls[0]!.id;
    // Both see no vote yet: each alone would only vote, and the call would wait forever.
    const a = await readFor(dana, callId);
    const b = await readFor(sam, callId);
    planDecision(a, callId, { outcome: "approve", expectedRevision: 1 });
    await commit(writesOf(a, dana));
    planDecision(b, callId, { outcome: "approve", expectedRevision: 1 });
    await expect(commit(writesOf(b, sam))).rejects.toBeInstanceOf(StateMoved);

    const { call } = await decideCall(sam, callId, { outcome: "approve", expectedRevision: 1 });
    expect(call).toMatchObject({ status: "approved", decision: { by: { name: "Sam Reviewer" } } });
    expect(call.votes.map((v) => v.reviewer.name)).toEqual(["Dana Reviewer", "Sam Reviewer"]);
  });
});
