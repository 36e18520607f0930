import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTeam } from "../support/factories";
import { freshDatabase } from "../support/database";
import { apiClient, refundBatch } from "../support/http";
import { startServer, type TestServer } from "../support/server";
import { sessionCookie, TEST_PASSWORD } from "../support/sessions";

// The server's log (lib/log/logger.ts) on a real server: JSON lines with a request id per request,
// at the level LOG_LEVEL asks for, and not one of the secrets the requests and the settings carry.

const secret = (label: string) => `${label}${randomBytes(12).toString("hex")}`;
const settings = {
  COUNTERSIGN_SECRET_KEY: randomBytes(32).toString("base64"),
  BETTER_AUTH_SECRET: secret("AuthSecret"),
  SMTP_URL: `smtp://countersign:${secret("SmtpPassword")}@127.0.0.1:9`,
  SETUP_CODE: secret("SETUPCODE"),
  LOG_LEVEL: "debug",
};
let server: TestServer;
let team: Awaited<ReturnType<typeof makeTeam>>;

beforeAll(async () => {
  const databaseUrl = await freshDatabase("logs");
  team = await makeTeam();
  server = await startServer({ databaseUrl, env: settings });
}, 60_000);

afterAll(() => server?.stop());

type LogLine = Record<string, unknown> & { level: string; msg: string };

/** Every line the server wrote that is a JSON object (the rest: instructions for a person). */
function logLines(): LogLine[] {
  return server
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The request lines of one request id (waits a moment: the line is written when the answer ends). */
async function requestLine(requestId: string): Promise<LogLine> {
  for (let tries = 0; tries < 50; tries++) {
    const line = logLines().find((l) => l.requestId === requestId && "status" in l);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no log line for request ${requestId}:\n${server.output()}`);
}

it("logs each API request once, with its id echoed to the client, and holds no secret", async () => {
  const agent = apiClient(server.baseUrl, team.agent.key);
  const sent: string[] = [
    team.agent.key,
    team.agent.webhookSecret,
    team.reviewer.token,
    TEST_PASSWORD,
    ...Object.values(settings).filter((value) => value !== "debug"),
    new URL(settings.SMTP_URL).password,
  ];

  // An agent's request; its id is made up by the server and echoed.
  const created = await agent.post("/runs", { batch: refundBatch() });
  expect(created.status).toBe(201);
  const generatedId = created.headers.get("x-request-id")!;
  expect(generatedId).toMatch(/^[0-9a-f-]{36}$/);
  const line = await requestLine(generatedId);
  expect(line).toMatchObject({
    level: "info",
    method: "POST",
    path: "/api/v1/runs",
    status: 201,
    requestId: generatedId,
  });
  expect(line.durationMs).toEqual(expect.any(Number));

  // A client's own sane id is kept; an unreadable one is replaced.
  const tagged = await agent.get(`/runs/${created.body.id}`, { "x-request-id": "agent-7.run:42" });
  expect(tagged.headers.get("x-request-id")).toBe("agent-7.run:42");
  expect((await requestLine("agent-7.run:42")).status).toBe(200);
  const odd = await agent.get(`/runs/${created.body.id}`, { "x-request-id": "<script>x</script>" });
  expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

  // Secrets in every place a request carries them: a wrong key, a query string, a body that is
  // not JSON, a session cookie, a reviewer token, an emailed link's path.
  const wrongKey = `cs_agent_${randomBytes(32).toString("base64url")}`;
  sent.push(wrongKey);
  expect((await apiClient(server.baseUrl, wrongKey).get("/runs/nope")).status).toBe(401);
  const querySecret = secret("QuerySecret");
  sent.push(querySecret);
  const queried = await agent.get(`/runs/${created.body.id}?token=${querySecret}`, {
    "x-request-id": "with-query",
  });
  expect(queried.status).toBe(200);
  expect((await requestLine("with-query")).path).toBe(`/api/v1/runs/${created.body.id}`);
  const bodySecret = secret("BodySecret");
  sent.push(bodySecret);
  const broken = await agent.raw("/runs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: `{"password": "${bodySecret}"`,
  });
  expect(broken.status).toBe(400);
  const cookie = await sessionCookie(server.baseUrl, team.reviewer.email);
  sent.push(...cookie.split("; ").map((pair) => decodeURIComponent(pair.split("=")[1]!)));
  const queue = await fetch(`${server.baseUrl}/api/v1/queue`, { headers: { cookie } });
  expect(queue.status).toBe(200);
  expect((await apiClient(server.baseUrl, team.reviewer.token).get("/queue")).status).toBe(200);
  const linkToken = `${Buffer.from(secret("LinkPayload")).toString("base64url")}.${secret("sig")}`;
  sent.push(linkToken);
  const page = await fetch(`${server.baseUrl}/card-link/${linkToken}`, {
    headers: { "x-request-id": "card-link-page" },
    redirect: "manual",
  });
  // LOG_LEVEL=debug: page requests are logged too, at debug, with the token masked.
  expect(await requestLine("card-link-page")).toMatchObject({
    level: "debug",
    path: "/card-link/:token",
    status: page.status,
  });

  await new Promise((resolve) => setTimeout(resolve, 200)); // the last lines
  const output = server.output();
  for (const value of sent)
    expect(output, `a secret (${value.slice(0, 12)}…) in the log`).not.toContain(value);
  // Every line but the plain start-up text is a JSON object with a level and a message.
  for (const entry of logLines()) {
    expect(typeof entry.level).toBe("string");
    expect(typeof entry.msg).toBe("string");
  }
  expect(logLines().some((l) => /^Ready in \d+ ms/.test(l.msg))).toBe(true);
}, 60_000);
