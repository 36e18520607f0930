import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import { sessionCookie } from "@/test/support/sessions";

// The reviewer pages × who asks: signed out → sign in; a member (any role) → the page; a
// signed-in reviewer of another queue → "not found", exactly as for an id that does not exist.

let server: TestServer;
const cookies: Record<string, string> = {};
let ids: { batch: string; run: string; queue: string; queueName: string };

beforeAll(async () => {
  server = await startApiServer("page-matrix");
  const queue = await makeQueue();
  const elsewhere = await makeQueue();
  const people = {
    reviewer: await makeReviewer({ queues: [{ name: queue.name, role: "reviewer" }] }),
    lead: await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] }),
    outsider: await makeReviewer({ queues: [{ name: elsewhere.name, role: "lead" }] }),
  };
  for (const [who, person] of Object.entries(people))
    cookies[who] = await sessionCookie(server.baseUrl, person.email);
  const agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [queue.name] })).key);
  const { run, batch } = await pausedRun(agent, refundBatch());
  ids = { batch: batch.id, run: run.id, queue: queue.id, queueName: queue.name };
}, 90_000);
afterAll(() => server?.stop());

async function page(path: string, who: string | null) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: who ? { cookie: cookies[who]! } : {},
    redirect: "manual",
  });
  return {
    status: response.status,
    location: response.headers.get("location"),
    html: await response.text(),
  };
}

/** What only the real page shows (the URL itself, and so the id, is echoed on every answer). */
const markers = () => ({
  batch: `data-batch-id="${ids.batch}"`,
  run: "Timeline",
  queueSettings: "Members",
  policies: ids.queueName,
});

describe("reviewer pages", () => {
  const paths = () => ({
    queue: "/queue",
    history: "/history",
    queues: "/queues",
    batch: `/batches/${ids.batch}`,
    run: `/runs/${ids.run}`,
    queueSettings: `/queues/${ids.queue}`,
    policies: `/policies?queue=${ids.queue}`,
  });

  it("send a signed-out visitor to sign in", async () => {
    for (const path of Object.values(paths())) {
      const answer = await page(path, null);
      expect([307, 308], path).toContain(answer.status);
      expect(answer.location, path).toMatch(/\/sign-in/);
    }
  });

  it.each(["reviewer", "lead"])(
    "show a %s of the queue its batch, run and settings",
    async (who) => {
      const p = paths();
      for (const path of [p.queue, p.history, p.queues]) {
        expect((await page(path, who)).status, path).toBe(200);
      }
      const m = markers();
      for (const key of ["batch", "run", "queueSettings", "policies"] as const) {
        const answer = await page(p[key], who);
        expect(answer.status, key).toBe(200);
        expect(answer.html, key).toContain(m[key]);
      }
    },
  );

  it("answer another queue's reviewer as if the batch, run and queue did not exist", async () => {
    const p = paths();
    const m = markers();
    for (const [key, missing] of [
      ["batch", "/batches/01a20000-0000-7000-8000-000000000000"],
      ["run", "/runs/01a20000-0000-7000-8000-000000000000"],
      ["queueSettings", "/queues/01a20000-0000-7000-8000-000000000000"],
    ] as const) {
      const theirs = await page(p[key], "outsider");
      const nothing = await page(missing, "outsider");
      expect(theirs.status, key).toBe(nothing.status);
      expect(theirs.html, key).not.toContain(m[key]);
      expect(theirs.html, key).toContain("Not found");
    }
    // Their own pages work, and show nothing of the other queue.
    const queue = await page(p.queue, "outsider");
    expect(queue.status).toBe(200);
    expect(queue.html).not.toContain(m.batch);
    expect((await page(p.history, "outsider")).html).not.toContain(ids.run);
    const policies = await page(p.policies, "outsider");
    expect(policies.html).toContain("That queue is not one of yours");
    expect(policies.html).not.toContain(ids.queueName);
  });
});

describe("sign-in pages", () => {
  // Public by nature; a signed-in visitor goes straight on, and only ever to a path of this app.
  it.each(["/sign-in", "/embed/sign-in"])(
    "%s: a form when signed out, on when signed in",
    async (path) => {
      const next = encodeURIComponent(`/embed/batches/${ids.batch}`);
      const signedOut = await page(`${path}?next=${next}`, null);
      expect(signedOut.status).toBe(200);
      expect(signedOut.html).toContain('id="password" type="password"');
      for (const who of ["reviewer", "outsider"]) {
        const signedIn = await page(`${path}?next=${next}`, who);
        expect(signedIn.status).toBe(307);
        expect(signedIn.location).toBe(`/embed/batches/${ids.batch}`);
        const hostile = await page(`${path}?next=/%5Cevil.example`, who);
        expect(hostile.location).toBe("/queue");
      }
    },
  );
});
