import { createServer, type IncomingMessage, type Server } from "node:http";
import { createHmac } from "node:crypto";

// A local stand-in for Slack's Web API (https://slack.com/api/<method>), for tests: Slack cannot
// be reached from here. It answers the methods Countersign calls as Slack does (HTTP 200, a JSON
// body with `ok`, and `error` when not ok), checks the bot token, and records every call with its
// arguments decoded as Slack would read them (form fields; `blocks` and `view` are JSON). The app
// talks to it through the official @slack/web-api client, pointed here with SLACK_API_URL.

export const SLACK_TEST_TOKEN = "xoxb-test-bot-token-never-shown";
export const SLACK_TEST_SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

export type SlackCall = {
  method: string;
  args: Record<string, any>;
  /** what the stand-in answered */
  answer: Record<string, any>;
  at: number;
};

export type SlackStandIn = {
  url: string;
  calls: SlackCall[];
  /** the calls of one method (optionally only those whose args match `where`) */
  callsOf: (method: string, where?: (args: Record<string, any>) => boolean) => SlackCall[];
  /** Slack user id → the email on their profile (users.info) */
  users: Map<string, string>;
  /** answer the next `n` calls of `method` with `{ ok: false, error }` */
  failNext: (method: string, n: number, error?: string) => void;
  stop: () => Promise<void>;
};

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startSlackStandIn(): Promise<SlackStandIn> {
  const calls: SlackCall[] = [];
  const users = new Map<string, string>();
  const failures = new Map<string, { n: number; error: string }>();
  let ts = 1_700_000_000_000;

  function answer(method: string, args: Record<string, any>): Record<string, unknown> {
    const failure = failures.get(method);
    if (failure && failure.n > 0) {
      failure.n--;
      return { ok: false, error: failure.error };
    }
    switch (method) {
      case "chat.postMessage": {
        const messageTs = `${Math.floor(++ts / 1000)}.${String(ts % 1000).padStart(6, "0")}`;
        return { ok: true, channel: args.channel, ts: messageTs, message: { text: args.text } };
      }
      case "chat.update":
        return { ok: true, channel: args.channel, ts: args.ts, text: args.text };
      case "chat.postEphemeral":
        return { ok: true, message_ts: `${Math.floor(++ts / 1000)}.000001` };
      case "views.open":
        return { ok: true, view: { id: `V${++ts}`, ...args.view } };
      case "users.info": {
        const email = users.get(args.user);
        if (email === undefined) return { ok: false, error: "user_not_found" };
        return { ok: true, user: { id: args.user, profile: { email, real_name: args.user } } };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  const server: Server = createServer(async (request, response) => {
    const method = (request.url ?? "").replace(/^\/api\//, "").split("?")[0]!;
    const raw = await bodyOf(request);
    const form = new URLSearchParams(raw);
    const args: Record<string, any> = {};
    for (const [key, value] of form) {
      try {
        args[key] = key === "blocks" || key === "view" ? JSON.parse(value) : value;
      } catch {
        args[key] = value;
      }
    }
    const body =
      request.headers.authorization !== `Bearer ${SLACK_TEST_TOKEN}`
        ? { ok: false, error: "invalid_auth" }
        : answer(method, args);
    calls.push({ method, args, answer: body, at: Date.now() });
    response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    callsOf: (method, where = () => true) =>
      calls.filter((c) => c.method === method && where(c.args)),
    users,
    failNext: (method, n, error = "internal_error") => failures.set(method, { n, error }),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * An interaction request as Slack sends one: `payload=<JSON>` form-encoded, signed with the
 * signing secret over "v0:<timestamp>:<body>" (https://api.slack.com/authentication/verifying-
 * requests-from-slack). `timestamp`, `secret` and `body` may be overridden to forge one.
 */
export function signedInteraction(
  payload: unknown,
  options: { timestamp?: number; secret?: string; signedBody?: string } = {},
) {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  // Signed here as Slack documents it, not with the app's own helper: a mistake there must fail.
  const base = `v0:${timestamp}:${options.signedBody ?? body}`;
  const signature = `v0=${createHmac("sha256", options.secret ?? SLACK_TEST_SIGNING_SECRET)
    .update(base)
    .digest("hex")}`;
  return {
    body,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": signature,
    },
  };
}
