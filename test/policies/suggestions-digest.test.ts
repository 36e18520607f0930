import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { notifications } from "@/db/schema";
import { decideCall } from "@/lib/approvals/decide-call";
import { authenticate, type Actor } from "@/lib/auth/actor";
import { deliverDueNotifications } from "@/lib/notifications/deliver-notifications";
import { setNotificationPreference } from "@/lib/notifications/preferences";
import { dismissSuggestion } from "@/lib/policies/dismiss-suggestion";
import { listPolicySuggestions } from "@/lib/policies/suggest-policies";
import { DIGEST_EVERY_MS, planSuggestionDigests } from "@/lib/policies/suggestions-digest";
import { changeRole } from "@/lib/queues/change-role";
import { OPERATOR } from "@/lib/queues/queue-access";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { freePort } from "../support/server";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver";

// The weekly suggestions email: through the notification outbox, to the queue's leads whose
// preferences for it have email on (and suggestions not turned off), once per suggestion — a
// dismissed one is never mailed, and a lead who stopped leading is skipped at send time.

let smtp: SmtpReceiver;
let queueId: string;
let lead: TestReviewer & { actor: Actor };
let quiet: TestReviewer & { actor: Actor };
let reviewer: TestReviewer & { actor: Actor };
let agent: Actor;

const actorOf = (token: string) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));
const EVENTS = { newCards: false, deadlines: false, escalations: false, decisions: false };

async function approvals(toolName: string, n: number) {
  for (let i = 0; i < n; i++) {
    const { run } = await createRun(agent, {
      batch: { calls: [{ toolCallId: "c", toolName, args: { n: i } }] },
    });
    const call = run.batches![0]!.calls[0]!;
    await decideCall(reviewer.actor, call.id, { outcome: "approve", expectedRevision: 1 });
  }
}

const rowsOf = async () =>
  getDb().select().from(notifications).where(eq(notifications.kind, "suggestions"));

beforeAll(async () => {
  smtp = await startSmtpReceiver(await freePort());
  process.env.SMTP_URL = smtp.url;
  process.env.MAIL_FROM = "Countersign <notify@countersign.test>";
  await freshDatabase("suggestions-digest");
  const queue = await makeQueue({ name: "Digest queue" });
  queueId = queue.id;
  const person = async (name: string, role: "lead" | "reviewer") => {
    const made = await makeReviewer({ name, queues: [{ name: queue.name, role }] });
    return { ...made, actor: await actorOf(made.token) };
  };
  lead = await person("Lena Lead", "lead");
  quiet = await person("Quinn Quiet", "lead");
  reviewer = await person("Rory Reviewer", "reviewer");
  agent = await actorOf((await makeAgentKey({ name: "Mail bot", queues: [queue.name] })).key);
  await setNotificationPreference(lead.actor, queueId, { delivery: "immediate", events: EVENTS });
  await setNotificationPreference(quiet.actor, queueId, {
    delivery: "immediate",
    events: { ...EVENTS, suggestions: false },
  });
  // the reviewer has email on too, but does not lead: no suggestions for them
  await setNotificationPreference(reviewer.actor, queueId, {
    delivery: "immediate",
    events: EVENTS,
  });
  await approvals("send_email", 20);
  await approvals("post_message", 20);
}, 120_000);
afterAll(async () => {
  delete process.env.SMTP_URL;
  delete process.env.MAIL_FROM;
  await smtp?.stop();
});

describe("the weekly suggestions email", () => {
  it("goes to the leads who asked for it, once a week, naming each suggestion once", async () => {
    const now = Date.now() + 1000;
    // one dismissed before the week's run is never announced
    const { suggestions } = await listPolicySuggestions(lead.actor, { queue: queueId });
    expect(suggestions).toHaveLength(2);
    const post = suggestions.find((s) => s.toolName === "post_message")!;
    await dismissSuggestion(lead.actor, {
      queue: queueId,
      suggestionId: post.id,
      fingerprint: post.fingerprint,
    });
    expect(await planSuggestionDigests(now)).toBe(1);
    const [row] = await rowsOf();
    expect(row).toMatchObject({ userId: lead.id, batchId: null, status: "pending" });
    expect(await deliverDueNotifications(now)).toBe(1);
    const [mail] = smtp.to(lead.email);
    expect(mail!.parsed.subject).toBe("1 new policy suggestion for Digest queue");
    expect(mail!.parsed.text).toContain("Allow send_email");
    expect(mail!.parsed.text).not.toContain("post_message");
    expect(mail!.parsed.text).toContain(`/suggestions?queue=${queueId}`);
    expect(smtp.to(quiet.email)).toHaveLength(0);
    expect(smtp.to(reviewer.email)).toHaveLength(0);

    // within the week: not mined again; a week later: nothing new, nothing sent
    expect(await planSuggestionDigests(now + 1000)).toBe(0);
    expect(await planSuggestionDigests(now + DIGEST_EVERY_MS + 1000)).toBe(0);
    expect(await rowsOf()).toHaveLength(1);
  });

  it("skips, at send time, a lead who no longer leads the queue", async () => {
    await approvals("open_ticket", 20);
    const later = Date.now() + 3 * DIGEST_EVERY_MS;
    expect(await planSuggestionDigests(later)).toBe(1);
    await changeRole(OPERATOR, queueId, lead.id, { role: "reviewer" });
    await deliverDueNotifications(later);
    const rows = await rowsOf();
    expect(rows.find((r) => r.createdAt === later)).toMatchObject({
      status: "skipped",
      lastError: "the person no longer leads this queue",
    });
    expect(smtp.to(lead.email)).toHaveLength(1);
  });
});
