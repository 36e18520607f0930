import { createHmac, timingSafeEqual } from "node:crypto";

// Slack signs every interaction request (https://api.slack.com/authentication/verifying-requests-
// from-slack): X-Slack-Signature is "v0=" + hex HMAC-SHA256, keyed with the app's signing secret,
// of "v0:" + X-Slack-Request-Timestamp + ":" + the raw body. A request older (or newer) than five
// minutes is refused, so a captured request cannot be replayed later.

export const SIGNATURE_WINDOW_SECS = 300;

export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

/** Whether `body` came from Slack, as signed, within the window. Compares in constant time. */
export function verifySlackSignature(options: {
  secret: string;
  timestamp: string | null;
  signature: string | null;
  body: string;
  nowSecs?: number;
}): boolean {
  const { secret, timestamp, signature, body } = options;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  const now = options.nowSecs ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > SIGNATURE_WINDOW_SECS) return false;
  const expected = Buffer.from(slackSignature(secret, timestamp, body));
  const given = Buffer.from(signature);
  // timingSafeEqual needs equal lengths; a length mismatch says nothing about the secret
  return given.length === expected.length && timingSafeEqual(given, expected);
}
