import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches, events, notifications } from "@/db/schema";
import { cardLinkUrl } from "@/lib/email/card-links";
import { APP_LOCALE } from "@/lib/time/constants";
import { formatDateTime } from "@/lib/time/format";
import { removeMember } from "@/lib/queues/remove-member";
import { OPERATOR } from "@/lib/queues/queue-access";
import { addMember } from "@/lib/queues/add-member";
import { updateQueue } from "@/lib/queues/update-queue";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { decideOverApi, pauseNewRun } from "../support/flows";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { freePort, startServer, type TestServer } from "../support/server";
import { sessionCookie } from "../support/sessions";
import {
  SMTP_PASSWORD,
  startSmtpReceiver,
  type ReceivedMail,
  type SmtpReceiver,
} from "../support/smtp-receiver";

// Issue 16, items 1 and 2: notification preferences, the outbox, and email — against the real
// server and a real SMTP server in this process, every message parsed. One server for the file;
// the last test kills it mid-send and starts another over the same database.

let databaseUrl: string;
let server: TestServer;
let smtp: SmtpReceiver;
let agentKey: string;
let agent: ApiClient;
let queue: { id: string; name: string };
const people = {} as Record<"ivy" | "dee" | "rex" | "cal" | "dan" | "other", TestReviewer>;
const clients = {} as Record<keyof typeof people, ApiClient>;

const env = (smtpUrl: string) => ({
  SMTP_URL: smtpUrl,
  MAIL_FROM: "Countersign <notify@countersign.test>",
  NOTIFY_POLL_MS: "100",
  NOTIFY_RETRY_BASE_MS: "300",
  // a digest of "5 minutes" gathers for 1.5 s
  NOTIFY_DIGEST_UNIT_MS: "300",
  SMTP_TIMEOUT_MS: "1500",
  SWEEP_INTERVAL_MS: "200",
});

beforeAll(async () => {
  databaseUrl = await freshDatabase("notifications");
  queue = await makeQueue({ name: "Payments" });
  const member = { queues: [{ name: queue.name }] };
  people.ivy = await makeReviewer({ name: "Ivy Immediate", ...member });
  people.dee = await makeReviewer({ name: "Dee Digest", ...member });
  people.rex = await makeReviewer({ name: "Rex Removed", ...member });
  people.cal = await makeReviewer({ name: "Cal Claimer", ...member });
  people.dan = await makeReviewer({ name: "Dan Decider", ...member });
  people.other = await makeReviewer({ name: "Olga Other", ...member });
  const key = await makeAgentKey({ name: "Billing <b>bot</b>", queues: [queue.name] });
  agentKey = key.key;
  smtp = await startSmtpReceiver(await freePort());
  server = await startServer({ databaseUrl, env: env(smtp.url) });
  agent = apiClient(server.baseUrl, agentKey);
  for (const [who, person] of Object.entries(people))
    clients[who as keyof typeof people] = apiClient(server.baseUrl, person.token);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await smtp?.stop();
});

async function setPreference(client: ApiClient, queueId: string, body: unknown) {
  const response = await client.raw(`/me/notification-preferences/${queueId}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const ALL_EVENTS = { newCards: true, deadlines: true, escalations: true, decisions: true };

/** A card with hostile agent text, and arguments that must never reach a mailbox. */
function hostileBatch() {
  return refundBatch({
    calls: [
      {
        toolCallId: `call-${Math.random().toString(36).slice(2, 10)}`,
        toolName: "refund_order",
        args: { orderId: "A-1001", amount: 25, cardNumber: "4111-1111-1111-1111" },
        summary: 'Refund <script>alert("x")</script> order A-1001',
        risks: ["Money <img src=x onerror=alert(1)> leaves"],
        costEstimate: 25,
        costCurrency: "EUR",
      },
    ],
    timeoutSecs: 3600,
  });
}

const hrefsOf = (mail: ReceivedMail) =>
  [...String(mail.parsed.html).matchAll(/href="([^"]+)"/g)].map((m) =>
    m[1]!.replaceAll("&amp;", "&"),
  );
/** The card links of a message (the other link is to the settings page). */
const linksOf = (mail: ReceivedMail) =>
  hrefsOf(mail).filter((href) => href.includes("/card-link/"));

async function open(path: string, cookie?: string) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: cookie ? { cookie } : {},
    redirect: "manual",
  });
  return {
    status: response.status,
    location: response.headers.get("location"),
    html: await response.text(),
  };
}

const rowsFor = (batchId: string) =>
  getDb().select().from(notifications).where(eq(notifications.batchId, batchId));

describe("preferences", () => {
  it("lists the caller's queues with the defaults (off), and saves what they choose", async () => {
    const listed = await clients.ivy.get("/me/notification-preferences");
    expect(listed.status).toBe(200);
    expect(listed.body.emailConfigured).toBe(true);
    expect(listed.body.preferences).toEqual([
      {
        queue: { id: queue.id, name: "Payments" },
        delivery: "off",
        digestMinutes: 60,
        // the leads' weekly policy suggestions are on by default (lib/policies/README.md)
        events: { ...ALL_EVENTS, suggestions: true },
        updatedAt: null,
      },
    ]);
    const saved = await setPreference(clients.ivy, queue.id, {
      delivery: "immediate",
      events: ALL_EVENTS,
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ delivery: "immediate", events: ALL_EVENTS });
    const again = await clients.ivy.get("/me/notification-preferences");
    expect(again.body.preferences[0].delivery).toBe("immediate");
    expect(again.body.preferences[0].updatedAt).toEqual(expect.any(String));

    // everyone else of the file: Rex, Cal and Olga at once (Dee chooses her digest later)
    for (const who of ["rex", "cal", "other"] as const)
      expect(
        (await setPreference(clients[who], queue.id, { delivery: "immediate", events: ALL_EVENTS }))
          .status,
      ).toBe(200);
    // Dan only wants decisions: he gets no new-card mail
    expect(
      (
        await setPreference(clients.dan, queue.id, {
          delivery: "immediate",
          events: { newCards: false, deadlines: false, escalations: false, decisions: true },
        })
      ).status,
    ).toBe(200);
  });

  it("refuses bad input and other queues with the contract's errors, writing nothing", async () => {
    const before = await clients.ivy.get("/me/notification-preferences");
    for (const body of [
      { delivery: "hourly", events: ALL_EVENTS },
      { delivery: "digest", digestMinutes: 1, events: ALL_EVENTS },
      { delivery: "immediate", events: { ...ALL_EVENTS, newCards: "yes" } },
      { delivery: "immediate", events: ALL_EVENTS, extra: 1 },
      { delivery: "immediate" },
    ]) {
      const answer = await setPreference(clients.ivy, queue.id, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues.length).toBeGreaterThan(0);
    }
    const elsewhere = await makeQueue();
    const missing = await setPreference(clients.ivy, elsewhere.id, {
      delivery: "immediate",
      events: ALL_EVENTS,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect(await clients.ivy.get("/me/notification-preferences")).toMatchObject({
      body: before.body,
    });
    // an agent key is not a person
    expect((await agent.get("/me/notification-preferences")).status).toBe(403);
  });
});

describe("email", () => {
  let batch: { id: string; expiresAt: string; calls: { id: string; revision: number }[] };
  let mail: ReceivedMail;

  it("mails a new card at once: who asks, tool, summary, risks, cost, deadline, a link", async () => {
    // Ivy chose her own time zone: her mail writes the deadline in it (others' in UTC).
    const zone = await clients.ivy.raw("/me", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ timeZone: "Asia/Kolkata" }),
    });
    expect(zone.status).toBe(200);
    ({ batch } = await pauseNewRun(agent, hostileBatch()));
    mail = await waitUntil(() => smtp.to(people.ivy.email)[0], { what: "Ivy's email" });
    const { parsed } = mail;
    expect(parsed.from?.text).toContain("notify@countersign.test");
    expect(parsed.subject).toBe("[Countersign] Billing <b>bot</b> asks to run refund_order");
    const text = String(parsed.text);
    for (const fact of [
      "Who asks: Billing <b>bot</b>",
      "Queue: Payments",
      "Tool: refund_order",
      'Summary: Refund <script>alert("x")</script> order A-1001',
      "Risks: Money <img src=x onerror=alert(1)> leaves",
      "Cost: €25.00", // in the currency the call states
      `Deadline: ${formatDateTime(batch.expiresAt, { timeZone: "Asia/Kolkata", locale: APP_LOCALE })}`,
    ])
      expect(text).toContain(fact);
    expect(text).toMatch(/Deadline: .* GMT\+5:30/);
    // Agent text is escaped in the HTML part: no tag of the agent's survives as markup.
    const html = String(parsed.html);
    expect(html).toContain("Billing &lt;b&gt;bot&lt;/b&gt;");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(html).not.toMatch(/<script|<img|<b>bot/);
    // No secrets: not the arguments, the agent key, a token, nor the SMTP password.
    for (const secret of ["4111-1111-1111-1111", agentKey, people.ivy.token, SMTP_PASSWORD])
      expect(mail.raw).not.toContain(secret);
    // One link, to this server's card-link page, the same in both parts.
    const links = linksOf(mail);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(new RegExp(`^${server.baseUrl}/card-link/[\\w-]+\\.[\\w-]+$`));
    expect(text).toContain(links[0]);
    expect(hrefsOf(mail)).toEqual([links[0], `${server.baseUrl}/notifications`]);
    // Dan asked for decisions only; Dee's digest is not due yet.
    expect(smtp.to(people.dan.email)).toHaveLength(0);
    expect(smtp.to(people.dee.email)).toHaveLength(0);
  });

  it("lands on the card only for its reader, signed in, once; a scanner decides and uses nothing", async () => {
    const path = new URL(linksOf(mail)[0]!).pathname;
    // A mail scanner (no session) follows the link: sign-in, and back here after.
    const scanner = await open(path);
    expect(scanner.status).toBe(307);
    expect(scanner.location).toBe(`/sign-in?next=${encodeURIComponent(path)}`);
    // Someone else signed in: refused, and the link stays unused.
    const other = await open(path, await sessionCookie(server.baseUrl, people.other.email));
    expect(other.status).toBe(200);
    expect(other.html).toContain("This link is for someone else");
    // Ivy: the card.
    const ivy = await sessionCookie(server.baseUrl, people.ivy.email);
    const first = await open(path, ivy);
    expect(first.status).toBe(307);
    expect(first.location).toBe(`/batches/${batch.id}`);
    const card = await open(first.location!, ivy);
    expect(card.status).toBe(200);
    expect(card.html).toContain(`data-batch-id="${batch.id}"`);
    // Nothing was decided by any of it.
    const [row] = await getDb().select().from(batches).where(eq(batches.id, batch.id));
    expect(row!.status).toBe("pending");
    // Used once: refused after.
    const second = await open(path, ivy);
    expect(second.status).toBe(200);
    expect(second.html).toContain("This link was already used");
    // one use, logged once, as Ivy's
    const opened = await getDb().select().from(events).where(eq(events.type, "card_link.opened"));
    expect(opened).toMatchObject([
      { actorId: people.ivy.id, batchId: batch.id, queueId: null, runId: null },
    ]);
  });

  it("refuses an expired link and an altered one, deciding nothing", async () => {
    const ivy = await sessionCookie(server.baseUrl, people.ivy.email);
    const expired = new URL(
      await cardLinkUrl(people.ivy.id, batch.id, Date.now() - 120_000, 60_000),
    ).pathname;
    const answer = await open(expired, ivy);
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("This link has expired");
    const fresh = new URL(await cardLinkUrl(people.ivy.id, batch.id)).pathname;
    const altered = `${fresh.slice(0, -3)}${fresh.endsWith("AAA") ? "BBB" : "AAA"}`;
    expect((await open(altered, ivy)).html).toContain("This link cannot be used");
    // the unaltered one works: the refusals above were about the link, not the session
    expect((await open(fresh, ivy)).location).toBe(`/batches/${batch.id}`);
    const [row] = await getDb().select().from(batches).where(eq(batches.id, batch.id));
    expect(row!.status).toBe("pending");
  });

  it("gathers a digest of several cards into one message, once its period is over", async () => {
    const chosen = await setPreference(clients.dee, queue.id, {
      delivery: "digest",
      digestMinutes: 5,
      events: { ...ALL_EVENTS, decisions: false },
    });
    expect(chosen.status).toBe(200);
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await pauseNewRun(agent, hostileBatch())).batch);
    // Ivy gets each at once; Dee's digest, opened by the first of them, later
    await waitUntil(() => smtp.to(people.ivy.email).length >= 4, { what: "Ivy's emails" });
    expect(smtp.to(people.dee.email)).toHaveLength(0);
    const digest = await waitUntil(() => smtp.to(people.dee.email)[0], {
      what: "Dee's digest",
      timeoutMs: 8000,
    });
    expect(digest.parsed.subject).toBe("[Countersign] 3 cards for you");
    expect(linksOf(digest)).toHaveLength(3);
    await sleep(600);
    expect(smtp.to(people.dee.email)).toHaveLength(1);
    for (const b of made)
      expect(await rowsFor(b.id)).toContainEqual(
        expect.objectContaining({ userId: people.dee.id, status: "sent", digest: true }),
      );
  });

  it("warns of a deadline approaching, then tells the escalation queue's members", async () => {
    const oversight = await makeQueue({ name: "Oversight" });
    await updateQueue(OPERATOR, queue.id, { escalationQueueId: oversight.id });
    await addMember(OPERATOR, oversight.id, { email: people.other.email, role: "reviewer" });
    expect(
      (
        await setPreference(clients.other, oversight.id, {
          delivery: "immediate",
          events: ALL_EVENTS,
        })
      ).status,
    ).toBe(200);
    // 3 s to decide: the last fifth begins after 2.4 s; at 3 s the card moves to Oversight
    const { batch: urgent } = await pauseNewRun(
      agent,
      refundBatch({ timeoutSecs: 3, onTimeout: "escalate" }),
    );
    const warned = await waitUntil(
      () =>
        smtp
          .to(people.ivy.email)
          .find((m) => /^\[Countersign\] Deadline soon:/.test(String(m.parsed.subject))),
      { what: "Ivy's deadline warning", timeoutMs: 6000 },
    );
    expect(linksOf(warned)).toHaveLength(1);
    const escalated = await waitUntil(
      () =>
        smtp
          .to(people.other.email)
          .find((m) => String(m.parsed.subject).startsWith("[Countersign] Escalated to Oversight")),
      { what: "Olga's escalation email", timeoutMs: 6000 },
    );
    expect(String(escalated.parsed.text)).toContain("Escalated from: Payments");
    const [moved] = await getDb().select().from(batches).where(eq(batches.id, urgent.id));
    expect(moved).toMatchObject({ status: "pending", queueId: oversight.id });
    // Ivy is not in Oversight: her own new-card mail was sent, but nothing about the escalation
    expect(
      smtp.to(people.ivy.email).filter((m) => /Escalated/.test(String(m.parsed.subject))),
    ).toHaveLength(0);
  });

  it("tells who claimed a card that someone else decided it", async () => {
    const { batch: claimed } = await pauseNewRun(agent, refundBatch());
    expect((await clients.cal.post(`/batches/${claimed.id}/review-claim`, {})).status).toBe(200);
    await decideOverApi(clients.dan, claimed.calls[0], "reject");
    const news = await waitUntil(
      () =>
        smtp
          .to(people.cal.email)
          .find((m) => String(m.parsed.subject).startsWith("[Countersign] Rejected:")),
      { what: "Cal's decision email" },
    );
    expect(String(news.parsed.text)).toContain("Outcome: rejected (by Dan Decider)");
    // Dan decided it himself: no mail about it, though he asked for decisions
    await sleep(400);
    expect(smtp.to(people.dan.email)).toHaveLength(0);
  });

  it("sends nothing to someone who left the queue before the mail went out", async () => {
    // Rex moves to a digest, so his mail waits; then he is removed from the queue.
    await setPreference(clients.rex, queue.id, {
      delivery: "digest",
      digestMinutes: 5,
      events: ALL_EVENTS,
    });
    const before = smtp.to(people.rex.email).length;
    const { batch: later } = await pauseNewRun(agent, refundBatch());
    await waitUntil(async () => (await rowsFor(later.id)).some((r) => r.userId === people.rex.id), {
      what: "Rex's notification planned",
    });
    await removeMember(OPERATOR, queue.id, people.rex.id);
    const row = await waitUntil(
      async () =>
        (await rowsFor(later.id)).find((r) => r.userId === people.rex.id && r.status !== "pending"),
      { what: "Rex's notification settled", timeoutMs: 8000 },
    );
    expect(row).toMatchObject({
      status: "skipped",
      lastError: "the person no longer sees this card",
    });
    expect(smtp.to(people.rex.email)).toHaveLength(before);
    // and nothing new is even planned for him
    const { batch: after } = await pauseNewRun(agent, refundBatch());
    await waitUntil(async () => (await rowsFor(after.id)).some((r) => r.userId === people.ivy.id));
    expect((await rowsFor(after.id)).map((r) => r.userId)).not.toContain(people.rex.id);
  });

  it("retries with backoff while the mail server is down, then delivers once", async () => {
    await smtp.stop();
    const { batch: queued } = await pauseNewRun(agent, refundBatch());
    // `attempts` counts claims, so a row at 3 may have its third attempt still in flight (and
    // succeed once the server is back). Claimed a fourth time, its first three have failed.
    const failing = await waitUntil(
      async () =>
        (await rowsFor(queued.id)).find((r) => r.userId === people.ivy.id && r.attempts >= 4),
      { what: "three failed attempts", timeoutMs: 15_000 },
    );
    expect(failing.status).toBe("pending");
    expect(failing.lastError).toMatch(/ECONNREFUSED/);
    expect(failing.lastError).not.toContain(SMTP_PASSWORD);
    await smtp.start();
    const delivered = await waitUntil(
      async () =>
        (await rowsFor(queued.id)).find((r) => r.userId === people.ivy.id && r.status === "sent"),
      { what: "the delivery after the server came back", timeoutMs: 10_000 },
    );
    expect(delivered.attempts).toBeGreaterThanOrEqual(4);
    const copies = smtp.received.filter(
      (m) => m.parsed.messageId === `<${delivered.id}@countersign>`,
    );
    expect(copies).toHaveLength(1);
  });

  it("sends a message in flight when the server was killed once, after the restart", async () => {
    smtp.holdNext();
    const { batch: inFlight } = await pauseNewRun(agent, refundBatch());
    const [heldId] = await waitUntil(() => (smtp.held().length === 1 ? smtp.held() : null), {
      what: "a send in flight",
    });
    await server.kill(); // the mail server got the message but never answered: not delivered
    await waitUntil(() => smtp.heldClosed(), { what: "the killed server's connection to close" });
    smtp.release();
    const heldRow = /^<(.+)@countersign>$/.exec(heldId!)![1]!;
    const [claimed] = await getDb()
      .select()
      .from(notifications)
      .where(eq(notifications.id, heldRow));
    expect(claimed).toMatchObject({ status: "pending" });
    const sentBefore = smtp.received.length;
    server = await startServer({ databaseUrl, env: env(smtp.url) });
    // The held message is the first one sent after the card: one of its immediate emails, or a
    // digest that came due meanwhile. Its Message-ID names its (first) outbox row.
    const row = await waitUntil(
      async () =>
        (await getDb().select().from(notifications).where(eq(notifications.id, heldRow))).find(
          (r) => r.status === "sent",
        ),
      { what: "the resend after the restart", timeoutMs: 15_000 },
    );
    expect(row.attempts).toBe(claimed!.attempts + 1);
    await sleep(500);
    // Every message of the file arrived exactly once: nothing sent before the crash was resent,
    // and the one in flight arrived once.
    const ids = smtp.received.map((m) => m.parsed.messageId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(smtp.received.length).toBeGreaterThan(sentBefore);
    // and the card's own emails all went out after the restart
    await waitUntil(async () =>
      (await rowsFor(inFlight.id)).every((r) => r.digest || r.status === "sent"),
    );
    expect(ids).toContain(`<${row.id}@countersign>`);
  });
});
