import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches, events, slackMessages } from "@/db/schema";
import { OPERATOR } from "@/lib/queues/queue-access";
import { updateQueue } from "@/lib/queues/update-queue";
import { writeSnapshot } from "../support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { pauseNewRun } from "../support/flows";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import { waitUntil } from "../support/polling";
import {
  actionPagePath,
  findServerAction,
  invokeServerAction,
  serverActions,
} from "../support/server-actions";
import { startServer, type TestServer } from "../support/server";
import { sessionCookie } from "../support/sessions";
import {
  signedInteraction,
  SLACK_TEST_SIGNING_SECRET,
  SLACK_TEST_TOKEN,
  startSlackStandIn,
  type SlackCall,
  type SlackStandIn,
} from "../support/slack-stand-in";
import { freshDatabase } from "../support/database";

// Issue 16, item 3: a queue posts its cards to a Slack channel, and Slack users decide them.
// Against the real server and a Slack stand-in in this process (test/support/slack-stand-in.ts)
// that the app reaches through the official @slack/web-api client; every interaction request is
// signed here exactly as Slack documents it. One server for the file; the last test restarts it.

const CHANNEL = "C0OPSCHAN";
let databaseUrl: string;
let server: TestServer;
let slack: SlackStandIn;
let agent: ApiClient;
let agentKey: string;
let ops: { id: string; name: string };
let elsewhere: { id: string; name: string };
const people = {} as Record<"ana" | "ben" | "cat" | "lea" | "nora", TestReviewer>;
/** Slack user ids, each with the email on their Slack profile */
const SLACK = { ana: "U0ANA", ben: "U0BEN", cat: "U0CAT", nora: "U0NORA", stranger: "U0STRANGER" };

const env = (apiUrl: string) => ({
  SLACK_BOT_TOKEN: SLACK_TEST_TOKEN,
  SLACK_SIGNING_SECRET: SLACK_TEST_SIGNING_SECRET,
  SLACK_API_URL: apiUrl,
  SLACK_POLL_MS: "100",
  SLACK_RETRY_BASE_MS: "200",
  SWEEP_INTERVAL_MS: "200",
});

beforeAll(async () => {
  databaseUrl = await freshDatabase("slack");
  ops = await makeQueue({ name: "Ops" });
  elsewhere = await makeQueue({ name: "Escalations desk" });
  const member = { queues: [{ name: ops.name }] };
  people.ana = await makeReviewer({ name: "Ana Approver", ...member });
  people.ben = await makeReviewer({ name: "Ben Rejecter", ...member });
  people.cat = await makeReviewer({ name: "Cat Browser", ...member });
  people.lea = await makeReviewer({ name: "Lea Lead", queues: [{ name: ops.name, role: "lead" }] });
  people.nora = await makeReviewer({ name: "Nora Nonmember", queues: [{ name: elsewhere.name }] });
  const key = await makeAgentKey({ name: "Deploy <!channel> bot", queues: [ops.name] });
  slack = await startSlackStandIn();
  for (const who of ["ana", "ben", "cat", "nora"] as const)
    slack.users.set(SLACK[who], people[who].email.toUpperCase()); // Slack's case is not ours
  slack.users.set(SLACK.stranger, "stranger@elsewhere.example");
  server = await startServer({ databaseUrl, env: env(slack.url) });
  agentKey = key.key;
  agent = apiClient(server.baseUrl, agentKey);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await slack?.stop();
});

/** The messages (posts and updates Slack accepted) about one card, oldest first. */
const messagesOf = (batchId: string) =>
  slack.calls.filter(
    (c) =>
      (c.method === "chat.postMessage" || c.method === "chat.update") &&
      c.answer.ok &&
      JSON.stringify(c.args.blocks).includes(batchId),
  );
const postsOf = (batchId: string) =>
  messagesOf(batchId).filter((c) => c.method === "chat.postMessage");
const latest = (batchId: string) => messagesOf(batchId).at(-1);
const textOf = (call: SlackCall | undefined) => JSON.stringify(call?.args.blocks ?? null);

function buttonOf(call: SlackCall, actionId: string) {
  const actions = (call.args.blocks as any[]).find((b) => b.type === "actions");
  return (actions?.elements ?? []).find((e: any) => e.action_id === actionId);
}

/** A card paused in Ops, once Slack has it: the batch and its posted message. */
async function postedCard(body: Record<string, unknown> = refundBatch()) {
  const { batch } = await pauseNewRun(agent, body);
  const post = await waitUntil(() => postsOf(batch.id)[0], { what: "the card's Slack post" });
  return { batch, post };
}

/** A click on one of the message's buttons, as Slack sends it. */
function click(slackUser: string, message: SlackCall, actionId: string) {
  const button = buttonOf(message, actionId);
  if (!button) throw new Error(`The message has no ${actionId} button`);
  return {
    type: "block_actions",
    user: { id: slackUser, username: slackUser.toLowerCase(), team_id: "T0TEAM" },
    api_app_id: "A0APP",
    team: { id: "T0TEAM", domain: "acme" },
    container: { type: "message", message_ts: "1.1", channel_id: CHANNEL, is_ephemeral: false },
    trigger_id: `${Date.now()}.trigger.${slackUser}`,
    channel: { id: CHANNEL, name: "ops" },
    response_url: "https://hooks.slack.com/actions/T0TEAM/1/never-used",
    actions: [
      {
        type: "button",
        action_id: actionId,
        block_id: "countersign_actions",
        text: button.text,
        value: button.value,
        action_ts: `${Date.now() / 1000}`,
      },
    ],
  };
}

/** The submission of the Reject modal Slack was asked to open, with `reason` typed in. */
function submitModal(slackUser: string, opened: SlackCall, reason: string) {
  const view = opened.args.view;
  return {
    type: "view_submission",
    team: { id: "T0TEAM", domain: "acme" },
    user: { id: slackUser, team_id: "T0TEAM" },
    trigger_id: `${Date.now()}.submit`,
    view: {
      id: "V0MODAL",
      type: "modal",
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      state: { values: { reason: { reason_input: { type: "plain_text_input", value: reason } } } },
    },
  };
}

async function send(
  payload: unknown,
  options: Parameters<typeof signedInteraction>[1] & { headers?: Record<string, string> } = {},
) {
  const request = signedInteraction(payload, options);
  const response = await fetch(`${server.baseUrl}/api/slack/interactions`, {
    method: "POST",
    headers: { ...request.headers, ...options.headers },
    body: request.body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const ephemeralsTo = (slackUser: string) =>
  slack.callsOf("chat.postEphemeral", (a) => a.user === slackUser);

async function patch(client: ApiClient, path: string, body: unknown) {
  const response = await client.raw(path, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function batchOf(id: string) {
  const [row] = await getDb().select().from(batches).where(eq(batches.id, id));
  return row!;
}

describe("the queue setting", () => {
  it("is set by the queue's lead over PATCH /queues/{id}, and must be a channel id", async () => {
    const lead = apiClient(server.baseUrl, people.lea.token);
    const bad = await patch(lead, `/queues/${ops.id}`, { slackChannelId: "#ops" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_request");
    const reviewer = apiClient(server.baseUrl, people.ana.token);
    expect((await patch(reviewer, `/queues/${ops.id}`, { slackChannelId: CHANNEL })).status).toBe(
      403,
    );
    const set = await patch(lead, `/queues/${ops.id}`, { slackChannelId: CHANNEL });
    expect(set.status).toBe(200);
    expect(set.body.slackChannelId).toBe(CHANNEL);
    expect((await lead.get(`/queues/${ops.id}`)).body.slackChannelId).toBe(CHANNEL);
    // ops escalates to a queue that posts nowhere (a queue its lead cannot see: the operator sets it)
    await updateQueue(OPERATOR, ops.id, { escalationQueueId: elsewhere.id });
  });
});

describe("posting", () => {
  it("posts a new card once, with the facts and buttons, agent text made inert, no arguments", async () => {
    slack.failNext("chat.postMessage", 2, "service_unavailable");
    const { batch, post } = await postedCard(
      refundBatch({
        calls: [
          {
            toolCallId: "call-post",
            toolName: "refund_order",
            args: { orderId: "A-1", cardNumber: "4111-1111-1111-1111" },
            summary: "Refund <https://evil.example|your bank> order A-1",
            risks: ["Money leaves"],
            costEstimate: 25,
          },
        ],
      }),
    );
    // two refusals, then posted: retried, and once
    expect(slack.callsOf("chat.postMessage").length).toBeGreaterThanOrEqual(3);
    expect(post.args.channel).toBe(CHANNEL);
    const text = textOf(post);
    expect(text).toContain("Deploy &lt;!channel&gt; bot");
    expect(text).not.toContain("<!channel>");
    expect(text).toContain("&lt;https://evil.example|your bank&gt;");
    expect(text).toContain("refund_order");
    expect(text).toContain("Money leaves");
    expect(text).toContain("25.00");
    expect(text).not.toContain("4111");
    expect(buttonOf(post, "countersign_approve")).toBeTruthy();
    expect(buttonOf(post, "countersign_reject")).toBeTruthy();
    expect(buttonOf(post, "countersign_open").url).toBe(`${server.baseUrl}/batches/${batch.id}`);
    const row = await waitUntil(async () => {
      const [row] = await getDb()
        .select()
        .from(slackMessages)
        .where(eq(slackMessages.batchId, batch.id));
      return row?.status === "posted" && row;
    });
    expect(row).toMatchObject({ channelId: CHANNEL, ts: post.answer.ts, attempts: 0 });
    expect(postsOf(batch.id)).toHaveLength(1);
  });
});

describe("signatures", () => {
  it("refuses unsigned, forged, tampered and stale requests with 401, before doing anything", async () => {
    const { batch, post } = await postedCard();
    const payload = click(SLACK.ana, post, "countersign_approve");
    const before = await writeSnapshot();
    const slackCallsBefore = slack.calls.length;
    const now = Math.floor(Date.now() / 1000);
    const tampered = signedInteraction(payload);
    const cases = [
      await send(payload, { secret: "not-the-signing-secret" }),
      await send(payload, { timestamp: now - 360 }), // a replay six minutes on
      await send(payload, { timestamp: now + 360 }),
      // the body as signed, with the user swapped afterwards
      await send(
        { ...payload, user: { id: SLACK.ben } },
        {
          signedBody: tampered.body,
          timestamp: Number(tampered.headers["x-slack-request-timestamp"]),
        },
      ),
      await send(payload, { headers: { "x-slack-signature": "" } }),
      await send(payload, { headers: { "x-slack-signature": "v0=00" } }),
      // a reviewer's own credentials are not Slack's signature
      await send(payload, {
        headers: { "x-slack-signature": "", authorization: `Bearer ${people.ana.token}` },
      }),
    ];
    for (const [i, answer] of cases.entries()) {
      expect(answer.status, `case ${i}`).toBe(401);
      expect(answer.body.error.code).toBe("unauthenticated");
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await writeSnapshot()).toEqual(before);
    // not even a users.info lookup, nor an answer
    const asked = slack.calls.slice(slackCallsBefore).map((c) => c.method);
    expect(asked.filter((m) => !m.startsWith("chat.postMessage") && m !== "chat.update")).toEqual(
      [],
    );
    expect((await batchOf(batch.id)).status).toBe("pending");
    // and the same request, signed and fresh, is obeyed
    expect((await send(payload)).status).toBe(200);
    await waitUntil(async () => (await batchOf(batch.id)).outcome === "approved");
  });
});

describe("deciding from Slack", () => {
  it("approves: the decision is Ana's, and the message shows it without buttons", async () => {
    const { batch, post } = await postedCard();
    expect((await send(click(SLACK.ana, post, "countersign_approve"))).status).toBe(200);
    const decided = await apiClient(server.baseUrl, people.ana.token).get(`/batches/${batch.id}`);
    expect(decided.body.outcome).toBe("approved");
    expect(decided.body.calls[0].decision.by.name).toBe("Ana Approver");
    const update = await waitUntil(
      () =>
        slack
          .callsOf("chat.update", (a) => textOf({ args: a } as SlackCall).includes(batch.id))
          .at(-1),
      { what: "the message's update" },
    );
    expect(update.args).toMatchObject({ channel: CHANNEL, ts: post.answer.ts });
    expect(textOf(update)).toContain("Approved by Ana Approver");
    expect(buttonOf(update, "countersign_approve")).toBeUndefined();
    expect(buttonOf(update, "countersign_open")).toBeTruthy();
    expect(ephemeralsTo(SLACK.ana)).toHaveLength(0);

    // Ben clicks on the message as it was: told who decided, and nothing changes
    const before = await writeSnapshot();
    const late = click(SLACK.ben, post, "countersign_reject");
    await send(late);
    await send(click(SLACK.ben, post, "countersign_approve"));
    const told = await waitUntil(() => {
      const texts = ephemeralsTo(SLACK.ben).map((m) => m.args.text as string);
      return texts.some((t) => t.includes("already decided")) &&
        texts.some((t) => t.includes("Approved by Ana Approver"))
        ? texts
        : null;
    });
    expect(told.join("\n")).toMatch(/Nothing was decided/);
    expect(slack.callsOf("views.open", (a) => a.trigger_id === late.trigger_id)).toEqual([]);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("rejects with the reason typed in the modal", async () => {
    const { batch, post } = await postedCard();
    const clicked = click(SLACK.ben, post, "countersign_reject");
    expect((await send(clicked)).status).toBe(200);
    const opened = slack.callsOf("views.open", (a) => a.trigger_id === clicked.trigger_id)[0]!;
    expect(opened.args.view.callback_id).toBe("countersign_reject_modal");
    expect((await batchOf(batch.id)).status).toBe("pending"); // a click alone decides nothing

    const empty = await send(submitModal(SLACK.ben, opened, "   "));
    expect(empty.body).toMatchObject({ response_action: "errors" });
    expect((await batchOf(batch.id)).status).toBe("pending");

    expect(
      (await send(submitModal(SLACK.ben, opened, "Order A-1001 was already refunded"))).status,
    ).toBe(200);
    const decided = (await apiClient(server.baseUrl, people.ben.token).get(`/batches/${batch.id}`))
      .body;
    expect(decided.outcome).toBe("rejected");
    expect(decided.calls[0].decision).toMatchObject({
      by: { name: "Ben Rejecter" },
      reason: "Order A-1001 was already refunded",
    });
    await waitUntil(() => textOf(latest(batch.id)).includes("Rejected by Ben Rejecter"), {
      what: "the rejection on the message",
    });
    expect(textOf(latest(batch.id))).toContain("Order A-1001 was already refunded");
  });

  it("refuses an unmapped Slack user and a non-member, in a message only they see, writing nothing", async () => {
    const { batch, post } = await postedCard();
    const before = await writeSnapshot();
    for (const [user, expected] of [
      [SLACK.stranger, /does not know you/],
      [SLACK.nora, /not a reviewer of this card's queue/],
    ] as const) {
      for (const action of ["countersign_approve", "countersign_reject"]) {
        const clicked = click(user, post, action);
        expect((await send(clicked)).status).toBe(200);
        expect(slack.callsOf("views.open", (a) => a.trigger_id === clicked.trigger_id)).toEqual([]);
      }
      const told = await waitUntil(
        () => (ephemeralsTo(user).length >= 2 ? ephemeralsTo(user) : null),
        {
          what: "the refusals",
        },
      );
      for (const message of told) {
        expect(message.args.channel).toBe(CHANNEL);
        expect(message.args.text).toMatch(expected);
      }
    }
    // a forged modal submission (the modal never opened for them) is refused the same way
    const opened = {
      args: {
        view: {
          callback_id: "countersign_reject_modal",
          private_metadata: JSON.stringify({
            ...JSON.parse(buttonOf(post, "countersign_reject").value),
            c: CHANNEL,
          }),
        },
      },
    } as unknown as SlackCall;
    expect((await send(submitModal(SLACK.nora, opened, "no"))).status).toBe(200);
    await waitUntil(() => ephemeralsTo(SLACK.nora).length === 3);
    expect(await writeSnapshot()).toEqual(before);
    expect((await batchOf(batch.id)).status).toBe("pending");
  });
});

describe("races", () => {
  it("a browser decision and two Slack users at once: one winner, the others told who won", async () => {
    const { batch, post } = await postedCard();
    const clicked = click(SLACK.ben, post, "countersign_reject");
    await send(clicked);
    const opened = slack.callsOf("views.open", (a) => a.trigger_id === clicked.trigger_id)[0]!;
    const action = findServerAction(
      serverActions(),
      "app/(reviewer)/actions.ts",
      "decideBatchAction",
    );
    const cookie = await sessionCookie(server.baseUrl, people.cat.email);
    const call = batch.calls[0];
    const [browser, ana, ben] = await Promise.all([
      invokeServerAction(
        server.baseUrl,
        action,
        actionPagePath(action, { batchId: batch.id }),
        [batch.id, { outcome: "approve", expectedRevisions: { [call.id]: call.revision } }],
        { cookie },
      ),
      send(click(SLACK.ana, post, "countersign_approve")),
      send(submitModal(SLACK.ben, opened, "Not today")),
    ]);
    expect([browser.status, ana.status, ben.status]).toEqual([200, 200, 200]);
    const decidedEvents = await getDb()
      .select()
      .from(events)
      .where(and(eq(events.batchId, batch.id), eq(events.type, "call.decided")));
    expect(decidedEvents).toHaveLength(1);
    const winner = decidedEvents[0]!.actorName;
    const slackLosers = [
      ...(winner === "Ana Approver" ? [] : [SLACK.ana]),
      ...(winner === "Ben Rejecter" ? [] : [SLACK.ben]),
    ];
    if (winner === "Cat Browser") expect(browser.result).toMatchObject({ ok: true });
    else expect(browser.result).toMatchObject({ ok: false, code: "already_decided" });
    for (const loser of slackLosers) {
      const told = await waitUntil(
        () => ephemeralsTo(loser).find((m) => m.args.text.includes(`by ${winner}`)),
        { what: `${loser} told that ${winner} won` },
      );
      expect(told.args.text).toMatch(/^Nothing was decided: (Approved|Rejected) by /);
    }
    await waitUntil(() => textOf(latest(batch.id)).includes(`by ${winner}`), {
      what: "the winner on the message",
    });
  });

  it("updates the message when the card is decided in the browser", async () => {
    const { batch } = await postedCard();
    const cat = apiClient(server.baseUrl, people.cat.token);
    const call = batch.calls[0];
    const decided = await cat.post(`/calls/${call.id}/decision`, {
      outcome: "reject",
      expectedRevision: call.revision,
      reason: "Decided on the page",
    });
    expect(decided.status).toBe(200);
    await waitUntil(() => textOf(latest(batch.id)).includes("Rejected by Cat Browser"), {
      what: "the browser's decision on the message",
    });
    expect(latest(batch.id)!.method).toBe("chat.update");
    expect(buttonOf(latest(batch.id)!, "countersign_approve")).toBeUndefined();
  });
});

describe("decided by the deadline", () => {
  it("the message says the card was rejected at its deadline", async () => {
    const { batch } = await postedCard(refundBatch({ timeoutSecs: 1 }));
    await waitUntil(() => textOf(latest(batch.id)).includes("Rejected at the deadline"), {
      timeoutMs: 6000,
      what: "the deadline's rejection on the message",
    });
    expect(buttonOf(latest(batch.id)!, "countersign_approve")).toBeUndefined();
  });
});

describe("visibility", () => {
  it("does not post a card escalated to a queue without Slack; the old message says it moved, not where", async () => {
    const { batch } = await postedCard(refundBatch({ timeoutSecs: 1, onTimeout: "escalate" }));
    await waitUntil(async () => (await batchOf(batch.id)).queueId === elsewhere.id, {
      timeoutMs: 8000,
      what: "the escalation",
    });
    await waitUntil(() => textOf(latest(batch.id)).includes("moved to another queue"), {
      what: "the moved message",
    });
    const moved = textOf(latest(batch.id));
    expect(moved).not.toContain(elsewhere.name);
    expect(buttonOf(latest(batch.id)!, "countersign_approve")).toBeUndefined();
    expect(postsOf(batch.id)).toHaveLength(1);
    const rows = await getDb()
      .select()
      .from(slackMessages)
      .where(eq(slackMessages.batchId, batch.id));
    expect(rows.map((r) => r.queueId)).toEqual([ops.id]);
  });
});

describe("restarts", () => {
  it("a restarted server posts nothing twice, and the next card once", async () => {
    const { batch: before } = await postedCard();
    await server.stop();
    const postsBefore = slack.callsOf("chat.postMessage").length;
    server = await startServer({ databaseUrl, env: env(slack.url) });
    agent = apiClient(server.baseUrl, agentKey);
    const { batch: after } = await postedCard();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(slack.callsOf("chat.postMessage").length).toBe(postsBefore + 1);
    expect(postsOf(before.id)).toHaveLength(1);
    expect(postsOf(after.id)).toHaveLength(1);
    // no secret in anything the server printed
    expect(server.output()).not.toContain(SLACK_TEST_TOKEN);
    expect(server.output()).not.toContain(SLACK_TEST_SIGNING_SECRET);
  });
});
