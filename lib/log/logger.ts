import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type DestinationStream, type Logger } from "pino";
import { secretSettingValues, setting } from "@/lib/config/settings";

// Countersign's log: one JSON object per line on standard output (pino), for whatever collects
// the server's output (journald, Docker, Loki, an ELK pipeline). Level from LOG_LEVEL. Each
// line logged while a request is served carries its `requestId` (lib/log/request-log.ts), also
// echoed to the client in `X-Request-Id`, so an error line, its request line and the client's
// report can be matched.
//
// Secrets stay out of it twice over: fields that hold secrets by name are censored (`redact`),
// and every line is scrubbed, just before it is written, of the values of the secret settings
// and of anything shaped like one of our credentials (agent keys, reviewer tokens, claim tokens,
// link tokens, webhook signing secrets) — an error message quoting a failed query or a URL still
// cannot leak one. test/log/logs.test.ts sends secrets to a real server and greps its output.

/** Field paths whose values are censored wherever they appear in a log object. */
const REDACTED_PATHS = [
  "authorization",
  "cookie",
  "password",
  "token",
  "secret",
  "apiKey",
  "claimToken",
  "webhookSecret",
  "setupCode",
  "smtpUrl",
  ...[
    "authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "password",
    "token",
    "secret",
    "claimToken",
    "webhookSecret",
  ].flatMap((key) => [`*.${key}`, `*.*.${key}`, `*["${key}"]`, `*.*["${key}"]`]),
];

/** Our credentials by their shape: cs_agent_…, cs_rev_…, cs_claim_…, cs_link_…, whsec_…. */
const CREDENTIAL_SHAPES = /\b(?:cs_[a-z]+_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=]{16,})/g;

function secretValues(): string[] {
  const values: string[] = [];
  for (const { name, value: raw } of secretSettingValues()) {
    if (raw.length < 6) continue;
    values.push(
      raw,
      ...raw
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part.length >= 6),
    );
    if (name === "SMTP_URL" && URL.canParse(raw)) {
      const password = decodeURIComponent(new URL(raw).password);
      if (password.length >= 4) values.push(password, new URL(raw).password);
    }
  }
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

/** A line with every secret value and credential-shaped string replaced. */
export function scrubSecrets(line: string, secrets = secretValues()): string {
  let scrubbed = line.replace(CREDENTIAL_SHAPES, "[Redacted]");
  for (const secret of secrets) {
    // As it appears inside a JSON string, too (quotes and backslashes escaped).
    const escaped = JSON.stringify(secret).slice(1, -1);
    scrubbed = scrubbed.split(secret).join("[Redacted]").split(escaped).join("[Redacted]");
  }
  return scrubbed;
}

type RequestContext = { requestId: string };

// One per process, not per bundle: the server's own code and Next.js's bundle of lib/ each load
// this module (lib/http/server.ts says why), and a request entered in one is logged from both.
const globalLog = globalThis as unknown as {
  __countersignLog?: {
    logger: Logger;
    context: AsyncLocalStorage<RequestContext>;
    requestLines?: Logger;
  };
};

/** A logger with Countersign's options, writing to standard output or (tests) `destination`. */
export function createLogger(
  context = new AsyncLocalStorage<RequestContext>(),
  destination?: DestinationStream,
): Logger {
  let secrets = secretValues();
  let secretsReadAt = Date.now();
  return pino(
    {
      level: levelOrInfo(),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: "[Redacted]" },
      mixin: () => {
        const request = context.getStore();
        return request ? { requestId: request.requestId } : {};
      },
      hooks: {
        streamWrite: (line) => {
          // Secret settings change only in tests; re-read them at most once a second.
          if (Date.now() - secretsReadAt > 1000) {
            secrets = secretValues();
            secretsReadAt = Date.now();
          }
          return scrubSecrets(line, secrets);
        },
      },
    },
    // Synchronous: a line written just before process.exit (a failed start) is not lost, and
    // one short write per request costs little beside the request.
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

function create() {
  const context = new AsyncLocalStorage<RequestContext>();
  return { logger: createLogger(context), context };
}

/** LOG_LEVEL, or info when it is unusable (the start-up check reports it and stops the server). */
function levelOrInfo(): string {
  try {
    return setting("LOG_LEVEL");
  } catch {
    return "info";
  }
}

function state(): NonNullable<typeof globalLog.__countersignLog> {
  return (globalLog.__countersignLog ??= create());
}

/** The process's logger. */
export function log(): Logger {
  return state().logger;
}

/**
 * The logger of the one line per request (lib/log/request-log.ts): the process's logger (same
 * level, output, mixin and scrubbing of every line) without `redact`. That line's fields are its
 * id, method, path, status and duration, none of them a redacted name, and matching them against
 * the 46 redacted paths cost about 1.5% of the server's CPU per write (test/bench/README.md,
 * "Per-request CPU, one at a time"). A child keeps the level its parent had when it was made:
 * nothing changes the level after start-up.
 */
export function requestLineLog(): Logger {
  const current = state();
  return (current.requestLines ??= current.logger.child({}, { redact: [] }));
}

/** Runs `work` with `requestId` attached to every line it logs. */
export function withRequestId<T>(requestId: string, work: () => T): T {
  return state().context.run({ requestId }, work);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return state().context.getStore()?.requestId;
}
