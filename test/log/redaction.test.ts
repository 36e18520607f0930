import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { createLogger, scrubSecrets } from "@/lib/log/logger";
import { loggablePath } from "@/lib/log/request-log";

// What the log does to secrets that reach it (test/log/logs.test.ts checks a real server's
// output): fields named like secrets are censored, and secret values and credential-shaped
// strings are scrubbed from every line, messages and error stacks included.

const saved = { ...process.env };
afterEach(() => {
  for (const name of ["SMTP_URL", "COUNTERSIGN_SECRET_KEY", "LOG_LEVEL"]) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(line) } };
}

it("censors secret fields and scrubs secret values and credentials from every line", () => {
  const smtpPassword = `Smtp${randomBytes(8).toString("hex")}`;
  const secretKey = randomBytes(32).toString("base64");
  process.env.SMTP_URL = `smtps://mailer:${smtpPassword}@mail.example.com:465`;
  process.env.COUNTERSIGN_SECRET_KEY = secretKey;
  const agentKey = `cs_agent_${randomBytes(32).toString("base64url")}`;
  const claimToken = `cs_claim_${randomBytes(32).toString("base64url")}`;
  const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
  const { lines, destination } = capture();
  const log = createLogger(undefined, destination);

  log.info(
    {
      headers: { authorization: "Bearer opaque-value-1", cookie: "session=opaque-value-2" },
      user: { password: "opaque-value-3" },
      claimToken: "opaque-value-4",
    },
    "a request",
  );
  log.error({ err: new Error(`connect to ${process.env.SMTP_URL} failed`) }, "sending failed");
  log.warn(`unknown key ${agentKey}; claim ${claimToken}; webhook secret ${webhookSecret}`);
  log.warn(`key ${secretKey} quoted "${secretKey}"`);
  log.warn(`the mail server refused the password ${smtpPassword}`);

  const output = lines.join("");
  for (const value of [
    "opaque-value-1",
    "opaque-value-2",
    "opaque-value-3",
    "opaque-value-4",
    smtpPassword,
    secretKey,
    agentKey,
    claimToken,
    webhookSecret,
  ])
    expect(output).not.toContain(value);
  expect(lines).toHaveLength(5);
  expect(JSON.parse(lines[0]!).headers).toEqual({
    authorization: "[Redacted]",
    cookie: "[Redacted]",
  });
  expect(JSON.parse(lines[1]!).err.message).toBe("connect to [Redacted] failed");
  expect(JSON.parse(lines[4]!).msg).toBe("the mail server refused the password [Redacted]");
});

it("writes from the level LOG_LEVEL asks for", () => {
  process.env.LOG_LEVEL = "warn";
  const { lines, destination } = capture();
  const log = createLogger(undefined, destination);
  log.info("not shown");
  log.warn("shown");
  expect(lines.map((line) => JSON.parse(line).msg)).toEqual(["shown"]);
});

it("scrubs a secret however JSON escaped it", () => {
  expect(scrubSecrets('{"msg":"pa\\"ss\\\\word!"}', ['pa"ss\\word!'])).toBe('{"msg":"[Redacted]"}');
});

it("tags every line logged while a request is served, awaits included, with its id", async () => {
  const context = new AsyncLocalStorage<{ requestId: string }>();
  const { lines, destination } = capture();
  const log = createLogger(context, destination);
  await context.run({ requestId: "req-1" }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.error({ err: new Error("boom") }, "Unexpected error while serving a request");
  });
  log.info("between requests");
  expect(lines.map((line) => JSON.parse(line).requestId)).toEqual(["req-1", undefined]);
});

it("logs paths without query strings or token segments", () => {
  expect(loggablePath("/api/v1/runs/abc?token=secret#x")).toBe("/api/v1/runs/abc");
  expect(loggablePath("/invite/abc.def")).toBe("/invite/:token");
  expect(loggablePath("/reset-password/abc?x=1")).toBe("/reset-password/:token");
  expect(loggablePath(`/api/v1/things/${"a".repeat(65)}/more`)).toBe(
    "/api/v1/things/:redacted/more",
  );
  expect(loggablePath("/api/v1/batches/01a21287-ce39-7ce0-9587-e4a8f6b74572")).toBe(
    "/api/v1/batches/01a21287-ce39-7ce0-9587-e4a8f6b74572",
  );
});
