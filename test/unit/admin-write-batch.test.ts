import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { closeDb, getDb } from "@/db/client";
import { StateMoved, statement, writeBatch } from "@/db/write-batch";
import { authenticate, type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { claimReview } from "@/lib/claims/claim-review";
import { releaseReview } from "@/lib/claims/release-review";
import { changeReviewerMark } from "@/lib/claims/reviewer-mark";
import { bringBack } from "@/lib/set-aside/bring-back";
import { setAside } from "@/lib/set-aside/set-aside";
import { ApiError } from "@/lib/errors";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { movePolicyRule } from "@/lib/policies/move-policy-rule";
import { updatePolicyRule } from "@/lib/policies/update-policy-rule";
import { addMember } from "@/lib/queues/add-member";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { changeRole } from "@/lib/queues/change-role";
import { createQueue } from "@/lib/queues/create-queue";
import { OPERATOR } from "@/lib/queues/queue-access";
import { removeMember } from "@/lib/queues/remove-member";
import { updateQueue } from "@/lib/queues/update-queue";
import { createRule } from "@/lib/routing/create-rule";
import { listRules } from "@/lib/routing/list-rules";
import { moveRule } from "@/lib/routing/move-rule";
import { deleteView } from "@/lib/views/delete-view";
import { saveView } from "@/lib/views/save-view";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// The admin verbs' write batches (db/write-batch.ts) under stale reads. `interleave` runs two
// verbs so that the late one has read before the early one commits and commits after it: the
// race two app instances meet. The late one's first batch must find the state moved and write
// nothing (its commit rejects with StateMoved), and its retry must give the answer the early
// one's state deserves. Real concurrency (Promise.all) is tried too where it matters.

// Every commit the verbs make goes through here: a test may hold the next one until another
// verb has run, and each commit's outcome is recorded.
const hook = vi.hoisted(() => ({
  hold: null as null | { reached: () => void; release: Promise<void> },
  outcomes: [] as ("written" | "moved" | "failed")[],
}));

vi.mock("@/lib/events/commit", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/events/commit")>();
  const { StateMoved: Moved } = await import("@/db/write-batch");
  return {
    ...actual,
    commit: async (statements: Parameters<typeof actual.commit>[0]) => {
      const held = hook.hold;
      if (held) {
        hook.hold = null;
        held.reached();
        await held.release;
      }
      try {
        const results = await actual.commit(statements);
        hook.outcomes.push("written");
        return results;
      } catch (error) {
        hook.outcomes.push(error instanceof Moved ? "moved" : "failed");
        throw error;
      }
    },
  };
});

/**
 * Runs `late` until it is about to commit, then `early` to the end, then lets `late` go on.
 * Returns both answers (an error is returned, not thrown) and the commits' outcomes in order.
 */
async function interleave<A, B>(late: () => Promise<A>, early: () => Promise<B>) {
  let reached!: () => void;
  let release!: () => void;
  const atCommit = new Promise<void>((resolve) => (reached = resolve));
  hook.outcomes = [];
  hook.hold = { reached, release: new Promise<void>((resolve) => (release = resolve)) };
  const lateAnswer = late().catch((error: unknown) => error);
  // A late verb that answers without writing never reaches the commit.
  await Promise.race([atCommit, lateAnswer]);
  hook.hold = null;
  const earlyAnswer = await early().catch((error: unknown) => error);
  release();
  return { late: await lateAnswer, early: earlyAnswer, outcomes: [...hook.outcomes] };
}

beforeEach(() => {
  hook.hold = null;
  hook.outcomes = [];
});

let databaseUrl: string;
const as = async (token: string) =>
  (await authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }))) as ReviewerActor;

async function count(sql: string, ...args: (string | null)[]): Promise<number> {
  const [result] = await writeBatch([{ sql, args }]);
  return Number(result!.rows[0]![0]);
}
const eventCount = () => count("select count(*) from events");

function expectApiError(answer: unknown, status: number, code: string) {
  expect(answer).toBeInstanceOf(ApiError);
  expect({ status: (answer as ApiError).status, code: (answer as ApiError).code }).toEqual({
    status,
    code,
  });
  return answer as ApiError;
}

beforeAll(async () => {
  databaseUrl = await freshDatabase("admin-write-batch");
});

afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

// Runs first: it needs an installation with exactly two admins.
describe("the last admin", () => {
  it("of two admins stepping down at once, exactly one goes; the other is told 409 last_admin", async () => {
    const home = await makeQueue();
    const ada = await as(
      (await makeReviewer({ queues: [{ name: home.name, role: "admin" }] })).token,
    );
    const bo = await as(
      (await makeReviewer({ queues: [{ name: home.name, role: "admin" }] })).token,
    );
    const before = await eventCount();

    const { late, early, outcomes } = await interleave(
      () => changeRole(ada, home.id, ada.id, { role: "lead" }),
      () => removeMember(bo, home.id, bo.id),
    );
    expect(early).toMatchObject({ userId: bo.id, role: "admin" });
    expect(outcomes).toEqual(["written", "moved"]);
    const refused = expectApiError(late, 409, "last_admin");
    expect(refused.extra.current).toMatchObject({ userId: ada.id, role: "admin" });
    expect(await count("select count(*) from queue_members where role = 'admin'")).toBe(1);
    expect(await eventCount()).toBe(before + 1);

    // Two admins again, demoting each other for real at once: still exactly one goes.
    await addMember(ada, home.id, { email: bo.email, role: "admin" });
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.allSettled([
        changeRole(ada, home.id, bo.id, { role: "reviewer" }),
        changeRole(bo, home.id, ada.id, { role: "reviewer" }),
      ]);
      const won = answers.filter((a) => a.status === "fulfilled");
      expect(won).toHaveLength(1);
      const lost = answers.find((a) => a.status === "rejected")!.reason as ApiError;
      // The loser either lost its admin power (403) or would have removed the last admin (409).
      expect(["last_admin", "forbidden"]).toContain(lost.code);
      expect(await count("select count(*) from queue_members where role = 'admin'")).toBe(1);
      const [admin] = (await getDb().query.queueMembers.findMany()).filter(
        (m) => m.role === "admin",
      );
      const other = admin!.userId === ada.id ? bo : ada;
      const stayed = admin!.userId === ada.id ? ada : bo;
      await changeRole(stayed, home.id, other.id, { role: "admin" });
    }
  });
});

describe("memberships", () => {
  it("a member added twice at once is added once; the other is 409 already_exists", async () => {
    const queue = await makeQueue();
    const newcomer = await makeReviewer();
    const before = await eventCount();
    const add = () => addMember(OPERATOR, queue.id, { email: newcomer.email });
    const { late, early, outcomes } = await interleave(add, add);
    expect(early).toMatchObject({ userId: newcomer.id, role: "reviewer" });
    expect(outcomes).toEqual(["written", "moved"]);
    expect(expectApiError(late, 409, "already_exists").extra.current).toMatchObject({
      userId: newcomer.id,
    });
    expect(await eventCount()).toBe(before + 1);
  });

  it("a lead demoted meanwhile adds no one: 403", async () => {
    const queue = await makeQueue();
    // the newcomer comes from another queue the lead leads (a lead adds no one from outside)
    const home = await makeQueue();
    const lead = await as(
      (
        await makeReviewer({
          queues: [
            { name: queue.name, role: "lead" },
            { name: home.name, role: "lead" },
          ],
        })
      ).token,
    );
    const newcomer = await makeReviewer({ queues: [{ name: home.name }] });
    const { late, outcomes } = await interleave(
      () => addMember(lead, queue.id, { email: newcomer.email }),
      () => changeRole(OPERATOR, queue.id, lead.id, { role: "reviewer" }),
    );
    expect(outcomes).toEqual(["written", "moved"]);
    expectApiError(late, 403, "forbidden");
    expect(
      await count(
        "select count(*) from queue_members where user_id = ? and queue_id = ?",
        newcomer.id,
        queue.id,
      ),
    ).toBe(0);
  });
});

describe("queues", () => {
  it("of two queues made with one name at once, one is made; the other is 409", async () => {
    const make = () => createQueue(OPERATOR, { name: "Twins" });
    const { late, early, outcomes } = await interleave(make, make);
    expect(early).toMatchObject({ name: "Twins" });
    expect(outcomes).toEqual(["written", "moved"]);
    expectApiError(late, 409, "already_exists");
    expect(await count("select count(*) from queues where name = 'Twins'")).toBe(1);
  });

  it("an escalation set while its target is archived is refused, and one set before is detached", async () => {
    const target = await createQueue(OPERATOR, { name: "Escalations" });
    const source = await createQueue(OPERATOR, { name: "Frontline" });
    const { late, outcomes } = await interleave(
      () => updateQueue(OPERATOR, source.id, { escalationQueueId: target.id }),
      () => archiveQueue(OPERATOR, target.id),
    );
    expect(outcomes).toEqual(["written", "moved"]);
    expectApiError(late, 400, "invalid_request");
    expect(
      await count("select count(*) from queues where escalation_queue_id = ?", target.id),
    ).toBe(0);

    const second = await createQueue(OPERATOR, { name: "Escalations 2" });
    const archived = await interleave(
      () => archiveQueue(OPERATOR, second.id),
      () => updateQueue(OPERATOR, source.id, { escalationQueueId: second.id }),
    );
    expect(archived.outcomes).toEqual(["written", "moved", "written"]);
    expect(archived.late).toMatchObject({ id: second.id, archivedAt: expect.any(String) });
    expect(
      await count("select count(*) from queues where escalation_queue_id = ?", second.id),
    ).toBe(0);
    const [event] = (
      await writeBatch([
        {
          sql: "select data from events where type = 'queue.archived' and queue_id = ?",
          args: [second.id],
        },
      ])
    )[0]!.rows;
    expect(JSON.parse(String(event![0]))).toMatchObject({ escalationRemovedFrom: [source.id] });
  });

  it("a setting changed meanwhile is logged with the value it really replaced", async () => {
    const queue = await createQueue(OPERATOR, { name: "Settings", requiredApprovals: 1 });
    await interleave(
      () => updateQueue(OPERATOR, queue.id, { requiredApprovals: 3 }),
      () => updateQueue(OPERATOR, queue.id, { requiredApprovals: 2 }),
    );
    const [result] = await writeBatch([
      {
        sql: "select data from events where type = 'queue.updated' and queue_id = ? order by seq",
        args: [queue.id],
      },
    ]);
    expect(result!.rows.map((row) => JSON.parse(String(row[0])).changes)).toEqual([
      { requiredApprovals: { before: 1, after: 2 } },
      { requiredApprovals: { before: 2, after: 3 } },
    ]);
  });
});

describe("rule order", () => {
  it("two routing moves at once keep the positions a permutation, the late one planned again", async () => {
    const queue = await makeQueue();
    const ids: string[] = [];
    for (const name of ["r1", "r2", "r3", "r4"])
      ids.push((await createRule(OPERATOR, { name, queue: queue.name })).id);
    const [r1, , , r4] = ids as [string, string, string, string];

    const { late, outcomes } = await interleave(
      () => moveRule(OPERATOR, r1, { to: 3 }),
      () => moveRule(OPERATOR, r4, { to: 0 }),
    );
    expect(outcomes).toEqual(["written", "moved", "written"]);
    // r4 went first, then r1 last, planned on that order.
    const order = late as Awaited<ReturnType<typeof listRules>>;
    expect(order.map((r) => r.name)).toEqual(["r4", "r2", "r3", "r1"]);
    expect(order.map((r) => r.position)).toEqual([10, 20, 30, 40]);

    // Many at once, for real.
    await Promise.all(
      [3, 0, 2, 1, 3, 0, 1, 2].map((to, i) => moveRule(OPERATOR, ids[i % 4]!, { to })),
    );
    const after = await listRules(OPERATOR);
    expect(after.map((r) => r.position)).toEqual([10, 20, 30, 40]);
    expect(new Set(after.map((r) => r.id))).toEqual(new Set(ids));
  });

  it("two rules added after the last at once get positions of their own", async () => {
    const queue = await makeQueue();
    const { outcomes } = await interleave(
      () => createRule(OPERATOR, { name: "p2", queue: queue.name }),
      () => createRule(OPERATOR, { name: "p1", queue: queue.name }),
    );
    expect(outcomes).toEqual(["written", "moved", "written"]);
    const positions = (await listRules(OPERATOR)).map((r) => r.position);
    expect(new Set(positions).size).toBe(positions.length);
  });

  it("two policy moves at once keep the list a permutation", async () => {
    const queue = await makeQueue();
    const ids: string[] = [];
    for (const name of ["a", "b", "c"])
      ids.push((await createPolicyRule(OPERATOR, { name, queue: queue.name, effect: "ask" })).id);
    const { outcomes } = await interleave(
      () => movePolicyRule(OPERATOR, ids[0]!, { to: 2 }),
      () => movePolicyRule(OPERATOR, ids[2]!, { to: 0 }),
    );
    expect(outcomes).toEqual(["written", "moved", "written"]);
    await Promise.all([2, 0, 1, 2].map((to, i) => movePolicyRule(OPERATOR, ids[i % 3]!, { to })));
    const [result] = await writeBatch([
      {
        sql: "select position from policy_rules where queue_id = ? order by position",
        args: [queue.id],
      },
    ]);
    expect(result!.rows.map((row) => Number(row[0]))).toEqual([10, 20, 30]);
  });

  it("a policy rule edited twice at once logs each edit over the one before", async () => {
    const queue = await makeQueue();
    const rule = await createPolicyRule(OPERATOR, {
      name: "edit",
      queue: queue.name,
      effect: "ask",
    });
    const { late, early, outcomes } = await interleave(
      () => updatePolicyRule(OPERATOR, rule.id, { reason: "late" }),
      () => updatePolicyRule(OPERATOR, rule.id, { effect: "deny" }),
    );
    expect(outcomes).toEqual(["written", "moved", "written"]);
    expect(early).toMatchObject({ effect: "deny" });
    expect(late).toMatchObject({ effect: "deny", reason: "late" });
    const [result] = await writeBatch([
      {
        sql: "select data from events where type = 'policy.rule_updated' and data ->> '$.before.id' = ? order by seq",
        args: [rule.id],
      },
    ]);
    const [first, second] = result!.rows.map((row) => JSON.parse(String(row[0])));
    expect(second.before).toEqual(first.after);
  });
});

describe("saved views", () => {
  it("one name saved twice at once is one view; deleting it twice at once logs it once", async () => {
    const queue = await makeQueue();
    const dana = await as((await makeReviewer({ queues: [{ name: queue.name }] })).token);
    const save = () => saveView(dana, { queueId: queue.id, name: "Mine", filters: { tool: "x" } });
    const saved = await interleave(save, save);
    expect(saved.outcomes).toEqual(["written", "moved"]);
    expectApiError(saved.late, 409, "already_exists");
    const view = saved.early as Awaited<ReturnType<typeof saveView>>;
    expect(view).toMatchObject({ name: "Mine", canDelete: true, createdBy: { id: dana.id } });

    const before = await eventCount();
    const remove = () => deleteView(dana, view.id);
    const deleted = await interleave(remove, remove);
    expect(deleted.outcomes).toEqual(["written", "moved"]);
    expectApiError(deleted.late, 404, "not_found");
    expect(await eventCount()).toBe(before + 1);
  });
});

describe("reviewer marks: review claims and set-asides", () => {
  let agent: AgentActor;
  let dana: ReviewerActor;
  let sam: ReviewerActor;

  beforeAll(async () => {
    const queue = await makeQueue();
    queueName = queue.name;
    const queues = [{ name: queue.name }];
    dana = await as((await makeReviewer({ name: "Dana Reviewer", queues })).token);
    sam = await as((await makeReviewer({ name: "Sam Reviewer", queues })).token);
    const key = await makeAgentKey({ queues: [queue.name] });
    agent = (await authenticate(
      getDb(),
      new Headers({ authorization: `Bearer ${key.key}` }),
    )) as AgentActor;
  });

  let queueName: string;
  async function pendingBatch() {
    const { run } = await createRun(agent, {
      // Named: the routing rules made above would send it elsewhere.
      batch: { queue: queueName, calls: [{ toolCallId: "t", toolName: "refund", args: {} }] },
    });
    return run.batches![0]!.id;
  }

  it("of two reviewers claiming at once one wins; the other is told who", async () => {
    const batchId = await pendingBatch();
    const before = await eventCount();
    const { late, early, outcomes } = await interleave(
      () => claimReview(sam, batchId, {}),
      () => claimReview(dana, batchId, {}),
    );
    expect(early).toMatchObject({ claim: { by: { name: "Dana Reviewer" } } });
    expect(outcomes).toEqual(["written", "moved"]);
    const refused = expectApiError(late, 409, "already_claimed");
    expect(refused.extra).toMatchObject({ holder: { id: dana.id, name: "Dana Reviewer" } });
    expect(await eventCount()).toBe(before + 1);
    expect(
      await count(
        "select count(*) from review_claims where batch_id = ? and user_id = ?",
        batchId,
        dana.id,
      ),
    ).toBe(1);
  });

  it("a release that races a renewal ends the renewed claim, logged once each", async () => {
    const batchId = await pendingBatch();
    await claimReview(dana, batchId, { minutes: 1 });
    const { late, early, outcomes } = await interleave(
      () => releaseReview(dana, batchId),
      () => claimReview(dana, batchId, { minutes: 10 }),
    );
    expect(early).toMatchObject({ claim: { by: { id: dana.id } } });
    expect(outcomes).toEqual(["written", "moved", "written"]);
    expect(late).toMatchObject({ claim: null });
    expect(await count("select count(*) from review_claims where batch_id = ?", batchId)).toBe(0);
  });

  it("a claim on a batch settled meanwhile is 409 not_pending and writes nothing", async () => {
    const batchId = await pendingBatch();
    const { late, outcomes } = await interleave(
      () => claimReview(sam, batchId, {}),
      () =>
        writeBatch([
          {
            sql: "update batches set status = 'cancelled' where id = ?",
            args: [batchId],
          },
        ]),
    );
    expect(outcomes).toEqual(["moved"]);
    expectApiError(late, 409, "not_pending");
    expect(await count("select count(*) from review_claims where batch_id = ?", batchId)).toBe(0);
  });

  // Set-asides are written like claims (lib/claims/reviewer-mark.ts): the same races, the same
  // answers.
  const marks = (batchId: string) =>
    count("select count(*) from set_asides where batch_id = ?", batchId);

  it("setting aside a card settled meanwhile is 409 not_pending and writes nothing", async () => {
    const batchId = await pendingBatch();
    const before = await eventCount();
    const { late, outcomes } = await interleave(
      () => setAside(dana, batchId, { for: "1h" }),
      () =>
        writeBatch([
          { sql: "update batches set status = 'cancelled' where id = ?", args: [batchId] },
        ]),
    );
    expect(outcomes).toEqual(["moved"]);
    expectApiError(late, 409, "not_pending");
    expect(await marks(batchId)).toBe(0);
    expect(await eventCount()).toBe(before);
  });

  it("a bring-back racing a new choice in another tab removes the new one, logged once each", async () => {
    const batchId = await pendingBatch();
    await setAside(dana, batchId, { for: "15m" });
    const before = await eventCount();
    const { late, early, outcomes } = await interleave(
      () => bringBack(dana, batchId),
      () => setAside(dana, batchId, { for: "1h" }),
    );
    expect(early).toMatchObject({ setAside: [{ by: { id: dana.id } }] });
    expect(outcomes).toEqual(["written", "moved", "written"]);
    expect(late).toMatchObject({ setAside: [] });
    expect(await marks(batchId)).toBe(0);
    expect(await eventCount()).toBe(before + 2);
  });

  it("a mark's write that changes no row aborts its batch, event and all", async () => {
    const batchId = await pendingBatch();
    const before = await eventCount();
    const attempt = changeReviewerMark(dana, batchId, {
      read: async () => undefined,
      change: ({ row }) => ({
        row,
        write: statement("delete from set_asides where batch_id = ? and 0", batchId),
        whilePending: true,
        event: { type: "batch.set_aside" },
      }),
    });
    await expect(attempt).rejects.toBeInstanceOf(StateMoved);
    expect(await eventCount()).toBe(before);
  });

  it("a mark's event carries the batch as its write leaves it", async () => {
    const batchId = await pendingBatch();
    const answer = await setAside(dana, batchId, { for: "1h" });
    const [result] = await writeBatch([
      {
        sql: "select data from events where batch_id = ? and type = 'batch.set_aside'",
        args: [batchId],
      },
    ]);
    const data = JSON.parse(String(result!.rows[0]![0]));
    expect(data.batch).toEqual(answer);
    expect(data.batch.setAside).toMatchObject([{ by: { id: dana.id } }]);
    expect(data).toMatchObject({ for: "1h", choice: "1 hour" });
  });
});
