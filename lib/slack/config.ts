import { LogLevel, WebClient } from "@slack/web-api";
import { setting } from "@/lib/config/settings";

// Slack is configured for the whole installation by two secrets from the Slack app's settings
// page: the bot token (xoxb-…, posts and updates messages, opens modals, looks up users) and the
// signing secret (proves an interaction request came from Slack). Neither is ever logged, stored
// or sent to a browser. SLACK_API_URL points the official client elsewhere (the tests' stand-in).

/** Whether cards can be posted: the bot token is set. */
export function slackConfigured(): boolean {
  return Boolean(setting("SLACK_BOT_TOKEN"));
}

/** The signing secret, or null: without it no interaction request can be trusted. */
export function slackSigningSecret(): string | null {
  return setting("SLACK_SIGNING_SECRET") || null;
}

/** How long one Web API call may take before it counts as failed (the outbox retries it). */
export function slackTimeoutMs(): number {
  return setting("SLACK_TIMEOUT_MS");
}

/** An interaction answers Slack within 3 s: what it asks Slack on the way gets at most this. */
const INTERACTIVE_TIMEOUT_MS = 1500;

const clients = new Map<string, WebClient>();

/**
 * The Web API client. Its own retries are off: a post is retried by the outbox (with the row's
 * claim, so never by two processes at once), and an interaction must answer Slack within 3 s
 * (`interactive`: a shorter timeout, for the calls made before that answer).
 */
export function slackClient(options: { interactive?: boolean } = {}): WebClient {
  const token = setting("SLACK_BOT_TOKEN");
  if (!token) throw new Error("SLACK_BOT_TOKEN is not set");
  const url = setting("SLACK_API_URL");
  const timeout = options.interactive
    ? Math.min(INTERACTIVE_TIMEOUT_MS, slackTimeoutMs())
    : slackTimeoutMs();
  const key = `${token}\n${url}\n${timeout}`;
  let client = clients.get(key);
  if (!client) {
    if (clients.size >= 4) clients.clear(); // the token or URL changed: drop the old ones
    client = new WebClient(token, {
      slackApiUrl: url,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout,
      // its debug output carries request bodies; errors alone name no secret
      logLevel: LogLevel.ERROR,
    });
    clients.set(key, client);
  }
  return client;
}
