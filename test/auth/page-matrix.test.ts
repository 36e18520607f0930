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
let trust: { agentPrefix: string; reviewerTokenPrefix: string };
const emails: Record<string, string> = {};
let adminToken: string;

beforeAll(async () => {
  server = await startApiServer("page-matrix");
  const queue = await makeQueue();
  const elsewhere = await makeQueue();
  const people = {
    reviewer: await makeReviewer({ queues: [{ name: queue.name, role: "reviewer" }] }),
    lead: await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] }),
    outsider: await makeReviewer({ queues: [{ name: elsewhere.name, role: "lead" }] }),
    admin: await makeReviewer({ queues: [{ name: elsewhere.name, role: "admin" }] }),
  };
  adminToken = people.admin.token;
  for (const [who, person] of Object.entries(people)) {
    cookies[who] = await sessionCookie(server.baseUrl, person.email);
    emails[who] = person.email;
  }
  const agentKey = await makeAgentKey({ queues: [queue.name] });
  const agent = apiClient(server.baseUrl, agentKey.key);
  trust = {
    agentPrefix: agentKey.key.slice(0, "cs_agent_".length + 6),
    reviewerTokenPrefix: people.reviewer.token.slice(0, "cs_rev_".length + 6),
  };
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

describe("the hosted MCP gateways page (issue 25)", () => {
  it("sends a signed-out visitor to sign in; lists gateways to reviewers, with the forms for admins only, and never a header's value", async () => {
    const admin = apiClient(server.baseUrl, adminToken);
    const created = await admin.post("/mcp-gateways", {
      name: "matrix-docs",
      url: "http://127.0.0.1:9/mcp",
      headers: { Authorization: "Bearer page-matrix-upstream-secret" },
    });
    expect(created.status).toBe(201);
    const signedOut = await page("/mcp-gateways", null);
    expect([307, 308]).toContain(signedOut.status);
    expect(signedOut.location).toMatch(/\/sign-in/);
    for (const who of ["reviewer", "lead", "outsider", "admin"]) {
      const answer = await page("/mcp-gateways", who);
      expect(answer.status, who).toBe(200);
      expect(answer.html, who).toContain("/api/mcp/gateways/matrix-docs");
      expect(answer.html, who).not.toContain("page-matrix-upstream-secret");
      expect(answer.html.includes("New MCP gateway"), who).toBe(who === "admin");
    }
  });
});

describe("key, token and audit pages (issue 14)", () => {
  it("send a signed-out visitor to sign in", async () => {
    for (const path of ["/agents", "/tokens", "/audit"]) {
      const answer = await page(path, null);
      expect([307, 308], path).toContain(answer.status);
      expect(answer.location, path).toMatch(/\/sign-in/);
    }
  });

  it("show agent keys to admins and their queue's leads only", async () => {
    const lead = await page("/agents", "lead");
    expect(lead.status).toBe(200);
    expect(lead.html).toContain(trust.agentPrefix);
    expect((await page("/agents", "admin")).html).toContain(trust.agentPrefix);
    const outsider = await page("/agents", "outsider");
    expect(outsider.status).toBe(200);
    expect(outsider.html).not.toContain(trust.agentPrefix);
    const reviewer = await page("/agents", "reviewer");
    expect(reviewer.html).toContain("Only an admin or a queue&#x27;s lead manages agent keys");
    expect(reviewer.html).not.toContain(trust.agentPrefix);
  });

  it("show a reviewer their own tokens, an admin everyone's", async () => {
    expect((await page("/tokens", "reviewer")).html).toContain(trust.reviewerTokenPrefix);
    expect((await page("/tokens", "lead")).html).not.toContain(trust.reviewerTokenPrefix);
    expect((await page("/tokens", "admin")).html).toContain(trust.reviewerTokenPrefix);
  });

  it("show the audit log to admins only", async () => {
    // a trust change to show: a personal token made through the API (from a session)
    const made = await apiClient(server.baseUrl).post(
      "/reviewer-tokens",
      {},
      { cookie: cookies.reviewer!, origin: server.baseUrl },
    );
    expect(made.status).toBe(201);
    const admin = await page("/audit", "admin");
    expect(admin.html).toContain(made.body.reviewerToken.tokenPrefix);
    expect(admin.status).toBe(200);
    expect(admin.html).toContain('data-testid="audit-row"');
    // the signed exports (GET /audit/export): links for admins only
    expect(admin.html).toContain("/api/v1/audit/export?format=csv");
    for (const who of ["reviewer", "lead", "outsider"]) {
      const answer = await page("/audit", who);
      expect(answer.html, who).toContain("Only an admin sees the audit log");
      expect(answer.html, who).not.toContain('data-testid="audit-row"');
      expect(answer.html, who).not.toContain("/api/v1/audit/export");
    }
  });
});

describe("the insights page (issue 17)", () => {
  it("sends a signed-out visitor to sign in", async () => {
    const answer = await page("/insights", null);
    expect([307, 308]).toContain(answer.status);
    expect(answer.location).toMatch(/\/sign-in/);
  });

  it("shows a lead their queues, an admin every queue, a reviewer that it is not for them", async () => {
    const option = (id: string) => `<option value="${id}"`;
    const lead = await page(`/insights?queue=${ids.queue}`, "lead");
    expect(lead.status).toBe(200);
    expect(lead.html).toContain(option(ids.queue));
    expect(lead.html).toContain('data-testid="insights-totals"');
    expect((await page("/insights", "admin")).html).toContain(option(ids.queue));
    // the outsider leads another queue: its insights, never this one's, even asked by id
    const outsider = await page(`/insights?queue=${ids.queue}`, "outsider");
    expect(outsider.status).toBe(200);
    expect(outsider.html).not.toContain(option(ids.queue));
    expect(outsider.html).toContain("That queue is not one of yours");
    expect(outsider.html).not.toContain('data-testid="insights-totals"');
    const reviewer = await page(`/insights?queue=${ids.queue}`, "reviewer");
    expect(reviewer.status).toBe(200);
    expect(reviewer.html).toContain('data-testid="insights-refused"');
    expect(reviewer.html).not.toContain(option(ids.queue));
  });
});

describe("the policy suggestions page (issue 29)", () => {
  it("is a lead's and an admin's: a reviewer is told so, an outsider never sees the queue", async () => {
    const signedOut = await page("/suggestions", null);
    expect([307, 308]).toContain(signedOut.status);
    expect(signedOut.location).toMatch(/\/sign-in/);
    const option = (id: string) => `<option value="${id}"`;
    for (const who of ["lead", "admin"]) {
      const answer = await page(`/suggestions?queue=${ids.queue}`, who);
      expect(answer.status, who).toBe(200);
      expect(answer.html, who).toContain(option(ids.queue));
      expect(answer.html, who).toContain('data-testid="no-suggestions"');
    }
    const outsider = await page(`/suggestions?queue=${ids.queue}`, "outsider");
    expect(outsider.html).not.toContain(option(ids.queue));
    expect(outsider.html).toContain("That queue is not one you lead");
    const reviewer = await page(`/suggestions?queue=${ids.queue}`, "reviewer");
    expect(reviewer.html).toContain('data-testid="suggestions-refused"');
    expect(reviewer.html).not.toContain(option(ids.queue));
  });
});

describe("the people page and one-time link pages (issue 14)", () => {
  it("sends a signed-out visitor to sign in", async () => {
    const answer = await page("/people", null);
    expect([307, 308]).toContain(answer.status);
    expect(answer.location).toMatch(/\/sign-in/);
  });

  it("shows an admin everyone, a lead their queue's members, a reviewer nothing", async () => {
    const admin = await page("/people", "admin");
    expect(admin.status).toBe(200);
    for (const who of ["reviewer", "lead", "outsider", "admin"])
      expect(admin.html, who).toContain(emails[who]);
    const lead = await page("/people", "lead");
    expect(lead.html).toContain(emails.reviewer);
    expect(lead.html).not.toContain(emails.outsider);
    expect(lead.html).not.toContain(emails.admin);
    // the outsider leads the admin's queue: they see its members, not the other queue's
    const outsider = await page("/people", "outsider");
    expect(outsider.html).toContain(emails.admin);
    expect(outsider.html).not.toContain(emails.reviewer);
    const reviewer = await page("/people", "reviewer");
    expect(reviewer.status).toBe(200);
    expect(reviewer.html).toContain("Only an admin or a queue&#x27;s lead manages people");
    expect(reviewer.html).not.toContain('data-testid="person-row"');
  });

  it("answers an unknown invite or reset link with a clear page, to anyone", async () => {
    for (const path of ["/invite/cs_link_nothing", "/reset-password/cs_link_nothing"]) {
      const answer = await page(path, null);
      expect(answer.status, path).toBe(200);
      expect(answer.html, path).toContain("This link cannot be used");
      expect(answer.html, path).not.toContain('type="password"');
    }
  });
});

describe("notification settings and card links (issue 16)", () => {
  it("sends a signed-out visitor to sign in", async () => {
    const answer = await page("/notifications", null);
    expect([307, 308]).toContain(answer.status);
    expect(answer.location).toMatch(/\/sign-in/);
  });

  it("shows each person their own queues' preferences only", async () => {
    for (const who of ["reviewer", "lead"]) {
      const answer = await page("/notifications", who);
      expect(answer.status, who).toBe(200);
      expect(answer.html, who).toContain(ids.queueName);
      expect(answer.html, who).toContain(emails[who]);
    }
    const outsider = await page("/notifications", "outsider");
    expect(outsider.status).toBe(200);
    expect(outsider.html).not.toContain(ids.queueName);
    expect(outsider.html).not.toContain(emails.reviewer);
  });

  it("shows the settings page to anyone signed in, with their own settings only", async () => {
    const signedOut = await page("/settings", null);
    expect([307, 308]).toContain(signedOut.status);
    expect(signedOut.location).toMatch(/\/sign-in/);
    for (const who of ["reviewer", "outsider"]) {
      const answer = await page("/settings", who);
      expect(answer.status, who).toBe(200);
      expect(answer.html, who).toContain("Show times in");
    }
  });

  it("answers a card link that is not one with a clear page, to anyone, deciding nothing", async () => {
    for (const who of [null, "reviewer", "outsider"]) {
      const answer = await page("/card-link/not.a-link", who);
      expect(answer.status, String(who)).toBe(200);
      expect(answer.html, String(who)).toContain("This link cannot be used");
      expect(answer.html, String(who)).not.toContain(`data-batch-id="${ids.batch}"`);
    }
  });
});

describe("the single sign-on settings page (issue 16)", () => {
  it("sends a signed-out visitor to sign in", async () => {
    const answer = await page("/settings/sso", null);
    expect([307, 308]).toContain(answer.status);
    expect(answer.location).toMatch(/\/sign-in/);
  });

  it("shows the form to admins only", async () => {
    const admin = await page("/settings/sso", "admin");
    expect(admin.status).toBe(200);
    expect(admin.html).toContain("/api/auth/callback/sso");
    for (const who of ["reviewer", "lead", "outsider"]) {
      const answer = await page("/settings/sso", who);
      expect(answer.html, who).toContain("Only an admin configures single sign-on");
      expect(answer.html, who).not.toContain("/api/auth/callback/sso");
    }
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
