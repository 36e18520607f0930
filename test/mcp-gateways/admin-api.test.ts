import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, mcpGateways } from "@/db/schema";
import { openSecret, parseSecretKey, SECRET_PLACES } from "@/lib/auth/sealed-secrets";
import { resolveUpstreamTarget } from "@/lib/mcp-gateways/upstream-target";
import { writeSnapshot } from "@/test/support/api-fixtures";
import { freshDatabase } from "@/test/support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { startServer, type TestServer } from "@/test/support/server";

// Issue 25, item 6: hosted MCP gateways through the API. Admins add, edit and disable them; the
// upstream's headers are write-only (sealed at rest, never answered, never in an event); upstream
// URLs meet the webhook targets' SSRF rules.

const keyText = randomBytes(32).toString("base64");
const UPSTREAM_TOKEN = "Bearer upstream-token-never-shown-7f3a9c";

let server: TestServer;
let admin: ApiClient;
let reviewer: ApiClient;
let agentIds: string[];

beforeAll(async () => {
  const databaseUrl = await freshDatabase("mcp-gateways-api");
  server = await startServer({ databaseUrl, env: { COUNTERSIGN_SECRET_KEY: keyText } });
  const queue = await makeQueue();
  admin = apiClient(
    server.baseUrl,
    (await makeReviewer({ queues: [{ name: queue.name, role: "admin" }] })).token,
  );
  reviewer = apiClient(
    server.baseUrl,
    (await makeReviewer({ queues: [{ name: queue.name }] })).token,
  );
  agentIds = [
    (await makeAgentKey({ name: "Docs bot", queues: [queue.name] })).id,
    (await makeAgentKey({ name: "Ops bot", queues: [queue.name] })).id,
  ];
});
afterAll(() => server?.stop());

const patch = (client: ApiClient, path: string, body: unknown) =>
  client
    .raw(path, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    })
    .then(async (r) => ({ status: r.status, body: await r.json() }));

describe("adding a gateway", () => {
  it("stores the headers sealed, answers only their names, and lists the endpoint for agents", async () => {
    const created = await admin.post("/mcp-gateways", {
      name: "docs",
      url: "http://127.0.0.1:9/mcp",
      headers: { Authorization: UPSTREAM_TOKEN, "X-Team": "search-team-42" },
      agents: [agentIds[0]],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const gateway = created.body.gateway;
    expect(gateway).toMatchObject({
      name: "docs",
      url: "http://127.0.0.1:9/mcp",
      endpoint: `${server.baseUrl}/api/mcp/gateways/docs`,
      headerNames: ["Authorization", "X-Team"],
      status: "enabled",
      revision: 1,
      agents: [{ id: agentIds[0], name: "Docs bot" }],
    });
    expect(JSON.stringify(created.body)).not.toContain("upstream-token");

    const listed = await reviewer.get("/mcp-gateways");
    expect(listed.status).toBe(200);
    expect(listed.body.gateways.map((g: { name: string }) => g.name)).toContain("docs");
    expect(JSON.stringify(listed.body)).not.toContain("upstream-token");
    expect(JSON.stringify(listed.body)).not.toContain("search-team-42");

    const [row] = await getDb().select().from(mcpGateways).where(eq(mcpGateways.id, gateway.id));
    expect(row!.headers).toMatch(/^enc:v1:/);
    expect(row!.headers).not.toContain("upstream-token");
    expect(row!.headers).not.toContain("search-team-42");
    expect(
      JSON.parse(
        openSecret(row!.headers, SECRET_PLACES.mcpGatewayHeaders(gateway.id), [
          parseSecretKey(keyText),
        ]),
      ),
    ).toEqual({ Authorization: UPSTREAM_TOKEN, "X-Team": "search-team-42" });

    const logged = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "mcp_gateway.created"));
    expect(logged).toHaveLength(1);
    expect(logged[0]!.data).toMatchObject({
      name: "docs",
      headerNames: ["Authorization", "X-Team"],
    });
    expect(JSON.stringify(logged[0])).not.toContain("upstream-token");
  });

  it("refuses a taken name with 409 already_exists and the gateway that has it", async () => {
    const again = await admin.post("/mcp-gateways", { name: "docs", url: "http://127.0.0.1:9/x" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_exists");
    expect(again.body.error.current.name).toBe("docs");
  });

  it("refuses what is not a name, a header or an agent key, writing nothing", async () => {
    const before = await writeSnapshot();
    for (const [body, path] of [
      [{ name: "Docs.Search", url: "http://127.0.0.1:9/mcp" }, "name"],
      [{ name: "h1", url: "http://127.0.0.1:9/mcp", headers: { "Bad Name": "x" } }, "headers"],
      [{ name: "h2", url: "http://127.0.0.1:9/mcp", headers: { Host: "evil.example" } }, "headers"],
      [{ name: "h3", url: "http://127.0.0.1:9/mcp", headers: { "X-A": "a\r\nX-B: b" } }, "headers"],
      [{ name: "h4", url: "http://127.0.0.1:9/mcp", agents: ["no-such-key"] }, "agents.0"],
    ] as const) {
      const answer = await admin.post("/mcp-gateways", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues[0].path.startsWith(path), answer.body.error.message).toBe(
        true,
      );
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is for admins only: a reviewer is 403 and writes nothing", async () => {
    const before = await writeSnapshot();
    const answer = await reviewer.post("/mcp-gateways", {
      name: "mine",
      url: "http://127.0.0.1:9/mcp",
    });
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("forbidden");
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("the SSRF rules of webhook targets", () => {
  it.each([
    ["http://10.0.0.5/mcp", "private"],
    ["http://169.254.169.254/latest/meta-data", "link-local"],
    ["http://localhost:8080/mcp", "loopback"],
    ["http://[::1]:8080/mcp", "loopback"],
    ["http://2130706433/mcp", "numeric shorthand"],
    ["http://user:secret@mcp.example.com/mcp", "credentials"],
    ["https://mcp.example.com/mcp?api_key=abc123", "credential in its query"],
    ["ftp://mcp.example.com/mcp", "http(s)"],
  ])("refuses %s at save (400 on url, nothing written)", async (url, reason) => {
    const before = await writeSnapshot();
    const answer = await admin.post("/mcp-gateways", { name: `s-${Date.now()}`, url });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.error.issues[0].path).toBe("url");
    expect(answer.body.error.message).toContain(reason);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("refuses headers (the upstream's credential) over plain http to a host that is not loopback: 400 on headers, nothing written (L6)", async () => {
    const before = await writeSnapshot();
    const refused = await admin.post("/mcp-gateways", {
      name: "plain",
      url: "http://mcp.example.com/mcp",
      headers: { Authorization: UPSTREAM_TOKEN },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "invalid_request" });
    expect(refused.body.error.issues[0].path).toBe("headers");
    expect(refused.body.error.message).toMatch(/only over https/);
    expect(JSON.stringify(refused.body)).not.toContain("upstream-token");
    expect(await writeSnapshot()).toEqual(before);
    // without a credential plain http is fine; giving it one later is the same 400
    const bare = await admin.post("/mcp-gateways", {
      name: "plain",
      url: "http://mcp.example.com/mcp",
    });
    expect(bare.status, JSON.stringify(bare.body)).toBe(201);
    const withToken = await patch(admin, `/mcp-gateways/${bare.body.gateway.id}`, {
      expectedRevision: bare.body.gateway.revision,
      headers: { Authorization: UPSTREAM_TOKEN },
    });
    expect(withToken.status).toBe(400);
    expect(withToken.body.error.issues[0].path).toBe("headers");
    // over https it is stored (sealed)
    const secure = await patch(admin, `/mcp-gateways/${bare.body.gateway.id}`, {
      expectedRevision: bare.body.gateway.revision,
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: UPSTREAM_TOKEN },
    });
    expect(secure.status, JSON.stringify(secure.body)).toBe(200);
    // and it cannot move back to plain http with its headers
    const back = await patch(admin, `/mcp-gateways/${bare.body.gateway.id}`, {
      expectedRevision: secure.body.gateway.revision,
      url: "http://mcp.example.com/mcp",
      headers: { Authorization: UPSTREAM_TOKEN },
    });
    expect(back.status).toBe(400);
    expect(back.body.error.message).toMatch(/only over https/);
  });

  it("refuses at connect time a name that now resolves to a private address (DNS rebinding)", async () => {
    const rebound = await resolveUpstreamTarget("https://mcp.example.com/mcp", {
      lookup: async () => [
        { address: "93.184.215.14", family: 4 },
        { address: "10.1.2.3", family: 4 },
      ],
    });
    expect(rebound).toMatchObject({ ok: false, permanent: true });
    expect(!rebound.ok && rebound.reason).toContain("10.1.2.3, a private address");
    const fine = await resolveUpstreamTarget("https://mcp.example.com/mcp", {
      lookup: async () => [{ address: "93.184.215.14", family: 4 }],
    });
    expect(fine).toMatchObject({ ok: true, address: "93.184.215.14" });
  });
});

describe("editing and disabling", () => {
  let id: string;
  let revision: number;

  beforeAll(async () => {
    const created = await admin.post("/mcp-gateways", {
      name: "ops",
      url: "http://127.0.0.1:9/mcp",
      headers: { Authorization: UPSTREAM_TOKEN },
    });
    ({ id, revision } = created.body.gateway);
  });

  it("changes what is given, compare-and-swapped on the revision", async () => {
    const edited = await patch(admin, `/mcp-gateways/${id}`, {
      expectedRevision: revision,
      agents: agentIds,
      url: "http://127.0.0.1:9/v2/mcp",
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.gateway).toMatchObject({
      revision: revision + 1,
      url: "http://127.0.0.1:9/v2/mcp",
      headerNames: ["Authorization"],
    });
    expect(edited.body.gateway.agents.map((a: { id: string }) => a.id).sort()).toEqual(
      [...agentIds].sort(),
    );
    const stale = await patch(admin, `/mcp-gateways/${id}`, {
      expectedRevision: revision,
      name: "ops-two",
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("stale_revision");
    expect(stale.body.error.current.revision).toBe(revision + 1);
    revision += 1;
  });

  it("needs the headers again when the upstream moves to another origin", async () => {
    const moved = await patch(admin, `/mcp-gateways/${id}`, {
      expectedRevision: revision,
      url: "http://127.0.0.1:10/mcp",
    });
    expect(moved.status).toBe(400);
    expect(moved.body.error.issues[0].path).toBe("headers");
    const withHeaders = await patch(admin, `/mcp-gateways/${id}`, {
      expectedRevision: revision,
      url: "http://127.0.0.1:10/mcp",
      headers: { "X-Api-Key": "another-upstream-secret-1234" },
    });
    expect(withHeaders.status).toBe(200);
    expect(withHeaders.body.gateway.headerNames).toEqual(["X-Api-Key"]);
    expect(JSON.stringify(withHeaders.body)).not.toContain("another-upstream-secret");
    revision += 1;
    const [event] = (
      await getDb().select().from(events).where(eq(events.type, "mcp_gateway.updated"))
    ).slice(-1);
    expect(event!.data).toMatchObject({ changed: ["url", "headers"], headerNames: ["X-Api-Key"] });
    expect(JSON.stringify(event)).not.toContain("another-upstream-secret");
  });

  it("disables (once: again answers it unchanged), and a reviewer cannot", async () => {
    const before = await writeSnapshot();
    expect((await reviewer.post(`/mcp-gateways/${id}/disable`)).status).toBe(403);
    expect(await writeSnapshot()).toEqual(before);
    const disabled = await admin.post(`/mcp-gateways/${id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body.gateway.status).toBe("disabled");
    const again = await admin.post(`/mcp-gateways/${id}/disable`);
    expect(again.body.gateway.revision).toBe(disabled.body.gateway.revision);
    expect(
      await getDb().select().from(events).where(eq(events.type, "mcp_gateway.disabled")),
    ).toHaveLength(1);
    const enabled = await patch(admin, `/mcp-gateways/${id}`, {
      expectedRevision: disabled.body.gateway.revision,
      status: "enabled",
    });
    expect(enabled.body.gateway.status).toBe("enabled");
  });

  it("answers 404 for a gateway that does not exist", async () => {
    expect((await admin.post("/mcp-gateways/nope/disable")).status).toBe(404);
    expect((await patch(admin, "/mcp-gateways/nope", { expectedRevision: 1 })).status).toBe(404);
  });
});
