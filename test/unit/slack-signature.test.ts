import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifySlackSignature } from "@/lib/slack/verify-signature";

// Slack's request signature (https://api.slack.com/authentication/verifying-requests-from-slack),
// at the edges of its five-minute window; test/notifications/slack.test.ts sends signed requests
// to the real server.

const secret = "8f742231b10e8888abcd99yyyzzz85a5";
const body = "payload=%7B%22type%22%3A%22block_actions%22%7D";
const at = 1_700_000_000;
/** Signed as Slack documents it, independently of the app's helper. */
const sign = (timestamp: number, signed = body, key = secret) =>
  `v0=${createHmac("sha256", key).update(`v0:${timestamp}:${signed}`).digest("hex")}`;
const verify = (nowSecs: number, signature = sign(at), timestamp: string | null = String(at)) =>
  verifySlackSignature({ secret, timestamp, signature, body, nowSecs });

describe("verifySlackSignature", () => {
  it("accepts Slack's signature up to five minutes either way, and not a second more", () => {
    expect(verify(at)).toBe(true);
    expect(verify(at + 300)).toBe(true);
    expect(verify(at - 300)).toBe(true);
    expect(verify(at + 301)).toBe(false);
    expect(verify(at - 301)).toBe(false);
  });

  it("refuses another secret, another body, another timestamp, and malformed headers", () => {
    expect(verify(at, sign(at, body, "another-secret"))).toBe(false);
    expect(verify(at, sign(at, `${body}x`))).toBe(false);
    expect(verify(at, sign(at + 1), String(at))).toBe(false);
    expect(verify(at, sign(at).toUpperCase())).toBe(false);
    expect(verify(at, sign(at).slice(0, -1))).toBe(false);
    expect(verify(at, "")).toBe(false);
    expect(verify(at, sign(at), null)).toBe(false);
    expect(verify(at, sign(at), "1.7e9")).toBe(false);
  });
});
