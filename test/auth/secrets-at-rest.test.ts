import { createHmac, createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, appSettings, mcpGateways } from "@/db/schema";
import { auditSigningKey } from "@/lib/audit/signing-key";
import { sealStoredSecrets } from "@/lib/seal-stored-secrets";
import { openSecret, parseSecretKey, sealSecret, SECRET_PLACES } from "@/lib/auth/sealed-secrets";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeReviewer, makeTeam } from "../support/factories";
import { decideOverApi, pauseNewRun } from "../support/flows";
import { apiClient, refundBatch } from "../support/http";
import { waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { sessionClient, signInRequest } from "../support/sessions";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

// Issue 14, finding 8 (part): the webhook signing secrets and the session-signing secret were
// stored in plain text. With COUNTERSIGN_SECRET_KEY set they are stored sealed (AES-256-GCM);
// rows written in plain text before the key was set keep working and are sealed at start-up.

const keyText = randomBytes(32).toString("base64");
const key = parseSecretKey(keyText);
const otherKey = parseSecretKey(randomBytes(32).toString("hex"));

describe("sealSecret / openSecret", () => {
  it("seals with a version prefix, bound to its place, and opens only with the same key", () => {
    const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=";
    const sealed = sealSecret(secret, "agent_keys.webhook_secret:a1", [key]);
    expect(sealed).toMatch(new RegExp(`^enc:v1:${key.id}:`));
    expect(sealed).not.toContain("c2VjcmV0");
    expect(sealSecret(secret, "agent_keys.webhook_secret:a1", [key])).not.toBe(sealed); // fresh IV
    expect(openSecret(sealed, "agent_keys.webhook_secret:a1", [key])).toBe(secret);
    // an older key still reads what it sealed
    expect(openSecret(sealed, "agent_keys.webhook_secret:a1", [otherKey, key])).toBe(secret);

    expect(() => openSecret(sealed, "agent_keys.webhook_secret:a2", [key])).toThrow(/altered/);
    expect(() => openSecret(sealed, "agent_keys.webhook_secret:a1", [otherKey])).toThrow(
      new RegExp(`key ${key.id}.*COUNTERSIGN_SECRET_KEY`),
    );
    expect(() => openSecret(sealed, "agent_keys.webhook_secret:a1", [])).toThrow(/not configured/);
  });

  it("stores and reads plain text when no key is configured, and reads plain rows with a key", () => {
    expect(sealSecret("plain", "app_settings.auth_secret", [])).toBe("plain");
    expect(openSecret("plain", "app_settings.auth_secret", [key])).toBe("plain");
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => parseSecretKey("too-short")).toThrow(/32 random bytes/);
  });
});

describe("a server with COUNTERSIGN_SECRET_KEY", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let team: Awaited<ReturnType<typeof makeTeam>>;
  const plainAuthSecret = randomBytes(32).toString("base64url");
  const plainGatewayHeaders = { Authorization: `Bearer ${randomBytes(16).toString("hex")}` };

  beforeAll(async () => {
    const databaseUrl = await freshDatabase("secrets-at-rest");
    // Written before any key was configured: in plain text, as today's main stores them.
    team = await makeTeam();
    await getDb()
      .insert(appSettings)
      .values({ key: "auth_secret", value: plainAuthSecret, createdAt: Date.now() });
    // a hosted MCP gateway's upstream headers (issue 25), saved before the key was set
    await getDb()
      .insert(mcpGateways)
      .values({
        id: "gw-plain",
        name: "plain",
        url: "https://mcp.example.com/mcp",
        headers: JSON.stringify(plainGatewayHeaders),
        headerNames: ["Authorization"],
        createdAt: Date.now(),
        updatedAt: Date.now(),
      });
    receiver = await startWebhookReceiver();
    server = await startServer({
      databaseUrl,
      env: { COUNTERSIGN_SECRET_KEY: keyText, WEBHOOK_POLL_MS: "50" },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  const storedWebhookSecret = async (agentKeyId: string) =>
    (
      await getDb()
        .select({ stored: agentKeys.webhookSecret })
        .from(agentKeys)
        .where(eq(agentKeys.id, agentKeyId))
    )[0]!.stored;

  it("seals the plain rows at start-up: the database no longer holds the secrets", async () => {
    const stored = await storedWebhookSecret(team.agent.id);
    expect(stored).toMatch(/^enc:v1:/);
    expect(stored).not.toContain(team.agent.webhookSecret.replace(/^whsec_/, ""));
    expect(openSecret(stored, SECRET_PLACES.webhookSecret(team.agent.id), [key])).toBe(
      team.agent.webhookSecret,
    );

    const [setting] = await getDb()
      .select()
      .from(appSettings)
      .where(eq(appSettings.key, "auth_secret"));
    expect(setting!.value).toMatch(/^enc:v1:/);
    expect(setting!.value).not.toContain(plainAuthSecret);
    expect(openSecret(setting!.value, SECRET_PLACES.authSecret, [key])).toBe(plainAuthSecret);

    const [gateway] = await getDb()
      .select()
      .from(mcpGateways)
      .where(eq(mcpGateways.id, "gw-plain"));
    expect(gateway!.headers).toMatch(/^enc:v1:/);
    expect(gateway!.headers).not.toContain(plainGatewayHeaders.Authorization.slice(7));
    expect(
      JSON.parse(openSecret(gateway!.headers, SECRET_PLACES.mcpGatewayHeaders("gw-plain"), [key])),
    ).toEqual(plainGatewayHeaders);
  });

  it("generates the key that signs exports at the first start, sealed, and serves its public half", async () => {
    const [stored] = await getDb()
      .select()
      .from(appSettings)
      .where(eq(appSettings.key, "audit_signing_key"));
    expect(stored!.value).toMatch(/^enc:v1:/);
    const pkcs8 = openSecret(stored!.value, SECRET_PLACES.auditSigningKey, [key]);
    const publicKey = createPublicKey(
      createPrivateKey({ key: Buffer.from(pkcs8, "base64"), format: "der", type: "pkcs8" }),
    )
      .export({ format: "der", type: "spki" })
      .subarray(-32)
      .toString("base64");
    const served = await apiClient(server.baseUrl, team.reviewer.token).get("/audit/public-key");
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ algorithm: "Ed25519", publicKey });
  });

  it("still signs webhooks that verify with the agent's secret", async () => {
    const { batch } = await pauseNewRun(
      apiClient(server.baseUrl, team.agent.key),
      refundBatch({ callbackUrl: `${receiver.url}/hook` }),
    );
    await decideOverApi(apiClient(server.baseUrl, team.reviewer.token), batch.calls[0]);
    await waitUntil(() => receiver.received.length >= 1, { what: "the webhook" });
    const [hook] = receiver.received;
    const payload = new Webhook(team.agent.webhookSecret).verify(hook!.body, hook!.headers);
    expect(payload).toMatchObject({ type: "batch.decided", data: { id: batch.id } });
  });

  it("still signs session cookies with the (decrypted) secret it had", async () => {
    const response = await signInRequest(server.baseUrl, team.reviewer.email);
    expect(response.status).toBe(200);
    const cookie = response.headers
      .getSetCookie()
      .find((c) => c.startsWith("better-auth.session_token="))!;
    const [token, signature] = decodeURIComponent(cookie.split(";")[0]!.split("=")[1]!).split(".");
    const expected = createHmac("sha256", plainAuthSecret).update(token!).digest("base64");
    expect(signature).toBe(expected);
  });

  it("refuses to start without the key that sealed them, naming it", async () => {
    await expect(
      startServer({ databaseUrl: process.env.DATABASE_URL!, env: { COUNTERSIGN_SECRET_KEY: "" } }),
    ).rejects.toThrow(new RegExp(`encrypted with key ${key.id}.*COUNTERSIGN_SECRET_KEY`));
  });

  it("seals the secret of a key an admin creates through the API", async () => {
    const admin = await makeReviewer({ queues: [{ name: team.queue.name, role: "admin" }] });
    const asAdmin = await sessionClient(server.baseUrl, admin.email);
    const created = await asAdmin.post("/agents", {
      name: `Sealed bot ${randomBytes(3).toString("hex")}`,
      defaultQueue: team.queue.id,
    });
    expect(created.status).toBe(201);
    const stored = await storedWebhookSecret(created.body.agent.id);
    expect(stored).toMatch(/^enc:v1:/);
    expect(openSecret(stored, SECRET_PLACES.webhookSecret(created.body.agent.id), [key])).toBe(
      created.body.webhookSecret,
    );
  });

  it("seals the secret of a key created while the key is configured", async () => {
    process.env.COUNTERSIGN_SECRET_KEY = keyText; // as `npm run admin` would run beside the server
    try {
      const agent = await makeAgentKey({ queues: [team.queue.name] });
      const stored = await storedWebhookSecret(agent.id);
      expect(stored).toMatch(/^enc:v1:/);
      expect(openSecret(stored, SECRET_PLACES.webhookSecret(agent.id), [key])).toBe(
        agent.webhookSecret,
      );
    } finally {
      delete process.env.COUNTERSIGN_SECRET_KEY;
    }
  });
});

describe("rotating COUNTERSIGN_SECRET_KEY", () => {
  it("reads with the old key and seals everything again with the new one", async () => {
    await freshDatabase("secrets-rotation");
    process.env.COUNTERSIGN_SECRET_KEY = keyText;
    try {
      const agent = await makeAgentKey({ queues: [(await makeTeam()).queue.name] });
      await auditSigningKey(); // generated, sealed with the old key
      const newKeyText = randomBytes(32).toString("base64");
      process.env.COUNTERSIGN_SECRET_KEY = newKeyText;
      process.env.COUNTERSIGN_OLD_SECRET_KEYS = keyText;
      expect(await sealStoredSecrets()).toBeGreaterThanOrEqual(3); // both agents, the signing key
      const [row] = await getDb()
        .select({ stored: agentKeys.webhookSecret })
        .from(agentKeys)
        .where(eq(agentKeys.id, agent.id));
      const newKey = parseSecretKey(newKeyText);
      expect(row!.stored).toMatch(new RegExp(`^enc:v1:${newKey.id}:`));
      expect(openSecret(row!.stored, SECRET_PLACES.webhookSecret(agent.id), [newKey])).toBe(
        agent.webhookSecret,
      );
      const [signingKey] = await getDb()
        .select()
        .from(appSettings)
        .where(eq(appSettings.key, "audit_signing_key"));
      expect(signingKey!.value).toMatch(new RegExp(`^enc:v1:${newKey.id}:`));
      expect(await sealStoredSecrets()).toBe(0); // nothing left to redo
    } finally {
      delete process.env.COUNTERSIGN_SECRET_KEY;
      delete process.env.COUNTERSIGN_OLD_SECRET_KEYS;
    }
  });
});
