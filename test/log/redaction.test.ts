import { randomBytes } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { createLogger, scrubSecrets } from "@/lib/log/logger";

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
