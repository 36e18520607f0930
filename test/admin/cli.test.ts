import { and, eq, gt, max } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, events, queueMembers, queues, routingRules, users } from "@/db/schema";
import { authenticate } from "@/lib/auth/actor";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { runAdminCli, runAdminCliViaTsx } from "../support/admin-cli";
import { freshDatabase } from "../support/database";

// `npm run admin -- …` as an operator runs it: a real child process on a real database file.

let databaseUrl: string;

const admin = (...args: string[]) => runAdminCli(databaseUrl, ...args);

beforeAll(async () => {
  databaseUrl = await freshDatabase("admin-cli");
});

describe("npm run admin", () => {
  it("creates a queue, a reviewer with roles, a personal token and an agent key that all work", async () => {
    const queue = await admin(
      "queue",
      "create",
      "refunds",
      "--required-approvals",
      "2",
      "--separation-of-duties",
    );
    expect(queue.code).toBe(0);
    const [row] = await getDb().select().from(queues).where(eq(queues.name, "refunds"));
    expect(row).toMatchObject({
      id: queue.stdout.trim(),
      requiredApprovals: 2,
      separationOfDuties: true,
    });

    const reviewer = await admin(
      "reviewer",
      "create",
      "--email",
      "Dana@Example.com",
      "--name",
      "Dana Reviewer",
      "--password",
      "long enough",
      "--queue",
      "refunds:lead",
    );
    expect(reviewer.code).toBe(0);
    const [user] = await getDb().select().from(users).where(eq(users.email, "dana@example.com"));
    expect(user?.id).toBe(reviewer.stdout.trim());
    const [membership] = await getDb()
      .select()
      .from(queueMembers)
      .where(eq(queueMembers.userId, user!.id));
    expect(membership).toMatchObject({ queueId: row!.id, role: "lead" });

    const token = (await admin("reviewer", "token", "--email", "dana@example.com")).stdout.trim();
    expect(token).toMatch(/^cs_rev_/);
    const asReviewer = await authenticate(
      getDb(),
      new Headers({ authorization: `Bearer ${token}` }),
    );
    expect(asReviewer).toMatchObject({ kind: "reviewer", id: user!.id, name: "Dana Reviewer" });

    await admin("queue", "create", "escalations");
    const agent = await admin(
      "agent",
      "create",
      "--name",
      "Support bot",
      "--queue",
      "refunds",
      "--queue",
      "escalations",
      "--owner",
      "dana@example.com",
    );
    expect(agent.code).toBe(0);
    const [key, secretLine] = agent.stdout.trim().split("\n");
    expect(key).toMatch(/^cs_agent_/);
    expect(secretLine).toMatch(/whsec_/);
    const asAgent = await authenticate(getDb(), new Headers({ authorization: `Bearer ${key}` }));
    expect(asAgent).toMatchObject({
      kind: "agent",
      name: "Support bot",
      defaultQueueId: row!.id,
      ownerUserId: user!.id,
    });
    expect(asAgent.kind === "agent" && asAgent.queueIds).toHaveLength(2);
    // only the hash is stored
    const stored = await getDb().select().from(agentKeys);
    expect(JSON.stringify(stored)).not.toContain(key!);
  }, 120_000); // a dozen CLI processes: slow on a loaded 2-core machine

  it("explains what is wrong, exits non-zero and writes nothing", async () => {
    const before = (await getDb().select().from(queues)).length;
    const cases: [string[], RegExp][] = [
      [["queue", "create", "refunds"], /exists/],
      [["queue", "create", "x", "--required-approvals", "two"], /whole number/],
      [
        [
          "reviewer",
          "create",
          "--email",
          "not-an-email",
          "--name",
          "N",
          "--password",
          "long enough",
        ],
        /email/i,
      ],
      [
        ["reviewer", "create", "--email", "a@b.co", "--name", "N", "--password", "short"],
        /8 characters/,
      ],
      [
        [
          "reviewer",
          "create",
          "--email",
          "a@b.co",
          "--name",
          "N",
          "--password",
          "long enough",
          "--queue",
          "nope",
        ],
        /Queue 'nope' not found/,
      ],
      [["reviewer", "token", "--email", "nobody@example.com"], /not found/],
      [["agent", "create", "--name", "Bot"], /at least one queue/],
      [
        ["agent", "create", "--name", "Bot", "--queue", "refunds", "--owner", "nobody@example.com"],
        /No reviewer/,
      ],
      [["frobnicate", "now"], /Unknown command/],
      // issue 24: stored text refuses control characters, from the CLI as from the API
      [["queue", "create", "Ops\u001b[31m"], /name: must not contain control characters/],
      [
        [
          "reviewer",
          "create",
          "--email",
          "a@b.co",
          "--name",
          "N\u0007",
          "--password",
          "long enough",
        ],
        /name: must not contain control characters/,
      ],
      [["agent", "create", "--name", "Bot\u0085", "--queue", "refunds"], /name: must not contain/],
    ];
    // (all at once: none of them may write, so they cannot interfere)
    const answers = await Promise.all(cases.map(([args]) => admin(...args)));
    cases.forEach(([args, message], i) => {
      expect(answers[i]!.code, args.join(" ")).not.toBe(0);
      expect(answers[i]!.stderr, args.join(" ")).toMatch(message);
    });
    expect((await getDb().select().from(queues)).length).toBe(before);
    expect((await getDb().select().from(users).where(eq(users.email, "a@b.co"))).length).toBe(0);
  }, 120_000); // a dozen CLI processes: slow on a loaded 2-core machine

  it("edits queues, manages members and archives, each change recorded as the operator's", async () => {
    const membership = async (queueName: string) => {
      const [row] = await getDb()
        .select({ role: queueMembers.role })
        .from(queueMembers)
        .innerJoin(queues, eq(queues.id, queueMembers.queueId))
        .innerJoin(users, eq(users.id, queueMembers.userId))
        .where(and(eq(queues.name, queueName), eq(users.email, "dana@example.com")));
      return row?.role ?? null;
    };
    const edit = await admin(
      "queue",
      "edit",
      "refunds",
      "--required-approvals",
      "3",
      "--no-separation-of-duties",
      "--default-timeout",
      "900",
      "--escalation-queue",
      "escalations",
      "--claim-mode",
      "lock",
      "--approve-on-timeout",
      "--approve-on-timeout-min-secs",
      "600",
      "--slack-channel",
      "C0REFUNDS",
    );
    expect(edit.code, edit.stderr).toBe(0);
    const [refunds] = await getDb().select().from(queues).where(eq(queues.name, "refunds"));
    const [escalations] = await getDb().select().from(queues).where(eq(queues.name, "escalations"));
    expect(refunds).toMatchObject({
      requiredApprovals: 3,
      separationOfDuties: false,
      defaultTimeoutSecs: 900,
      escalationQueueId: escalations!.id,
      claimMode: "lock",
      approveOnTimeout: true,
      approveOnTimeoutMinSecs: 600,
      slackChannelId: "C0REFUNDS",
    });
    const badMode = await admin("queue", "edit", "refunds", "--claim-mode", "grab");
    expect(badMode.code).not.toBe(0);
    expect(badMode.stderr).toMatch(/claimMode/);
    const [updated] = await getDb()
      .select()
      .from(events)
      .where(and(eq(events.queueId, refunds!.id), eq(events.type, "queue.updated")));
    expect(updated).toMatchObject({
      actorKind: "system",
      data: { changes: { requiredApprovals: { before: 2, after: 3 } } },
    });

    const steps: [string[], RegExp][] = [
      [
        [
          "member",
          "add",
          "--queue",
          "escalations",
          "--email",
          "dana@example.com",
          "--role",
          "admin",
        ],
        /as admin/,
      ],
      [
        [
          "member",
          "role",
          "--queue",
          "refunds",
          "--email",
          "dana@example.com",
          "--role",
          "reviewer",
        ],
        /now reviewer/,
      ],
      [["member", "remove", "--queue", "refunds", "--email", "dana@example.com"], /Removed/],
      [["queue", "archive", "escalations"], /Archived 'escalations'/],
    ];
    for (const [args, output] of steps) {
      const answer = await admin(...args);
      expect(answer.code, `${args.join(" ")}: ${answer.stderr}`).toBe(0);
      expect(answer.stdout).toMatch(output);
    }
    expect(await membership("escalations")).toBe("admin");
    expect(await membership("refunds")).toBeNull();

    const list = await admin("queue", "list");
    expect(list.stdout).toMatch(
      /refunds\s+3\s+no\s+lock\s+900s\s+after 600s\s+-\s+C0REFUNDS\s+0\s+open/,
    );
    expect(list.stdout).toMatch(/escalations\s+1\s+no\s+mark\s+3600s\s+no\s+-\s+-\s+1\s+archived/);

    const before = (await getDb().select().from(events)).length;
    const refusals: [string[], RegExp][] = [
      [["queue", "edit", "refunds", "--required-approvals", "0"], /requiredApprovals/],
      [["queue", "edit", "nope", "--required-approvals", "2"], /Queue 'nope' not found/],
      [["queue", "edit", "refunds", "--escalation-queue", "escalations"], /archived/],
      [
        ["queue", "edit", "refunds", "--separation-of-duties", "--no-separation-of-duties"],
        /not both/,
      ],
      [["queue", "edit", "refunds", "--approve-on-timeout", "--no-approve-on-timeout"], /not both/],
      [["queue", "edit", "refunds", "--slack-channel", "C0X", "--no-slack-channel"], /not both/],
      [["queue", "edit", "refunds", "--slack-channel", "#refunds"], /slackChannelId/],
      [["member", "remove", "--queue", "escalations", "--email", "dana@example.com"], /last admin/],
      [["member", "add", "--queue", "refunds", "--email", "nobody@example.com"], /No reviewer/],
      [["member", "role", "--queue", "refunds", "--email", "dana@example.com"], /needs --role/],
    ];
    const answers = await Promise.all(refusals.map(([args]) => admin(...args)));
    refusals.forEach(([args, message], i) => {
      expect(answers[i]!.code, args.join(" ")).not.toBe(0);
      expect(answers[i]!.stderr, args.join(" ")).toMatch(message);
    });
    expect((await getDb().select().from(events)).length).toBe(before);
  }, 120_000);

  it("adds, lists and removes routing rules", async () => {
    await admin("queue", "create", "cli-routing");
    const added = await admin(
      "route",
      "add",
      "--name",
      "Big refunds",
      "--queue",
      "cli-routing",
      "--tool",
      "refund_*",
      "--min-cost",
      "500",
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/Big refunds\s+cli-routing\s+any\s+refund_\*\s+500\s+yes/);
    const [rule] = await getDb().select().from(routingRules);
    expect(rule).toMatchObject({ name: "Big refunds", toolPattern: "refund_*", minCost: 500 });
    const bad = await admin("route", "add", "--name", "x", "--queue", "no-such-queue");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/queue/);
    expect((await admin("route", "remove", "--name", "Big refunds")).code).toBe(0);
    expect(await getDb().select().from(routingRules)).toEqual([]);
  }, 120_000);

  it("writes policy rules, tries a call, and switches an agent's mode", async () => {
    await admin("queue", "create", "cli-policy");
    const added = await admin(
      "policy",
      "add",
      "--name",
      "Output deletes",
      "--effect",
      "deny",
      "--queue",
      "cli-policy",
      "--tool",
      "delete_*",
      "--arg",
      "path prefix /output/",
      "--reason",
      "Output is append-only.",
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(
      /deny\s+Output deletes\s+cli-policy\s+tool matches delete_\* and path starts with "\/output\/"\s+yes/,
    );
    const tried = await admin(
      "policy",
      "try",
      "--queue",
      "cli-policy",
      "--tool",
      "delete_file",
      "--args",
      '{"path":"/output/a"}',
    );
    expect(tried.stdout).toMatch(/^BLOCKED: Blocked by rule 'Output deletes'/);
    const badArg = await admin(
      "policy",
      "add",
      "--name",
      "x",
      "--effect",
      "allow",
      "--arg",
      "path",
    );
    expect(badArg.code).toBe(1);
    expect(badArg.stderr).toMatch(/--arg takes/);
    expect(
      (await admin("policy", "disable", "--name", "Output deletes", "--queue", "cli-policy"))
        .stdout,
    ).toMatch(/is off/);

    const key = (await admin("agent", "create", "--name", "Mode bot", "--queue", "cli-policy"))
      .stdout;
    expect(key).toMatch(/^cs_agent_/);
    const mode = await admin("agent", "mode", "--name", "Mode bot", "--mode", "off");
    expect(mode.stdout).toMatch(/Mode bot' is now in mode off/);
    const [agent] = await getDb().select().from(agentKeys).where(eq(agentKeys.name, "Mode bot"));
    expect(agent!.mode).toBe("off");
    expect((await admin("agent", "mode", "--name", "Mode bot", "--mode", "sometimes")).code).toBe(
      1,
    );
  }, 120_000);

  it("revokes and rotates agent keys and revokes reviewer tokens, each an event (issue 14)", async () => {
    const bearer = (token: string) => new Headers({ authorization: `Bearer ${token}` });
    // This process remembers an authenticated key for a second; the CLI is another process.
    const works = async (token: string) => {
      forgetCachedActors();
      return authenticate(getDb(), bearer(token)).then(
        () => true,
        () => false,
      );
    };
    expect((await admin("queue", "create", "keys-q")).code).toBe(0);
    expect(
      (
        await admin(
          "reviewer",
          "create",
          "--email",
          "kim@example.com",
          "--name",
          "Kim",
          "--password",
          "long enough",
          "--queue",
          "keys-q",
        )
      ).code,
    ).toBe(0);
    const [before] = await getDb()
      .select({ seq: max(events.seq) })
      .from(events);

    const key = (await admin("agent", "create", "--name", "Rotor", "--queue", "keys-q")).stdout
      .split("\n")[0]!
      .trim();
    expect(await works(key)).toBe(true);
    const rotated = await admin("agent", "rotate", "--name", "Rotor", "--grace", "0");
    expect(rotated.code, rotated.stderr).toBe(0);
    const newKey = rotated.stdout.split("\n")[0]!.trim();
    expect(newKey).toMatch(/^cs_agent_/);
    expect(await works(key)).toBe(false);
    expect(await works(newKey)).toBe(true);
    const graceful = await admin("agent", "rotate", "--name", "Rotor");
    expect(graceful.stdout).toMatch(/previous key works until/);
    const rotor = graceful.stdout.split("\n")[0]!.trim();
    expect(await works(newKey)).toBe(true); // within its 24 h of grace
    expect((await admin("agent", "list")).stdout).toMatch(/Rotor.*rotated \(old key until/);
    const revoked = await admin("agent", "revoke", "--name", "Rotor");
    expect(revoked.stdout).toMatch(/Revoked the key of 'Rotor'/);
    expect(await works(rotor)).toBe(false);
    expect(await works(newKey)).toBe(false);
    expect((await admin("agent", "list")).stdout).toMatch(/Rotor.*revoked/);
    expect((await admin("agent", "revoke", "--name", "Nobody")).code).toBe(1);

    const first = (await admin("reviewer", "token", "--email", "kim@example.com")).stdout.trim();
    const second = (await admin("reviewer", "token", "--email", "kim@example.com")).stdout.trim();
    const listed = await admin("reviewer", "token", "list", "--email", "kim@example.com");
    expect(listed.stdout).toContain(`${first.slice(0, 13)}…`);
    expect(listed.stdout).toContain(`${second.slice(0, 13)}…`);
    expect(listed.stdout).not.toContain(first);
    const one = await admin(
      "reviewer",
      "token",
      "revoke",
      "--email",
      "kim@example.com",
      "--prefix",
      first.slice(0, 13),
    );
    expect(one.stdout).toMatch(/Revoked 1 token of kim@example.com/);
    expect(await works(first)).toBe(false);
    expect(await works(second)).toBe(true);
    expect((await admin("reviewer", "token", "revoke", "--email", "kim@example.com")).code).toBe(0);
    expect(await works(second)).toBe(false);
    expect((await admin("reviewer", "token", "revoke", "--email", "kim@example.com")).code).toBe(1);

    const logged = await getDb()
      .select({ type: events.type, actorName: events.actorName })
      .from(events)
      .where(gt(events.seq, before?.seq ?? 0))
      .orderBy(events.seq);
    expect(logged.map((e) => e.type)).toEqual([
      "agent.created",
      "agent.rotated",
      "agent.rotated",
      "agent.revoked",
      "reviewer_token.created",
      "reviewer_token.created",
      "reviewer_token.revoked",
      "reviewer_token.revoked",
    ]);
    expect(new Set(logged.map((e) => e.actorName))).toEqual(new Set(["Operator (admin CLI)"]));
  }, 120_000);

  it("runs as `npm run admin` starts it, tsx on the TypeScript entry (the others use its bundle)", async () => {
    const created = await runAdminCliViaTsx(databaseUrl, "queue", "create", "started-by-tsx");
    expect(created).toMatchObject({
      code: 0,
      stderr: `Database: ${databaseUrl} (DATABASE_URL from the environment)\n`,
    });
    const listed = await runAdminCliViaTsx(databaseUrl, "queue", "list");
    expect(listed.stdout).toContain("started-by-tsx");
  }, 60_000);

  it("prints its usage", async () => {
    const help = await admin("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("queue create <name>");
    expect(help.stdout).toContain("agent create --name N --queue NAME");
    expect(help.stdout).toContain("queue edit <name>");
    expect(help.stdout).toContain("member add --queue NAME --email E [--role R]");
  });
});
