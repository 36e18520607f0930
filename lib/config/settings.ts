import { z } from "zod";

// Every setting Countersign reads from its environment, in one table: its type, its default and
// what it means. Code reads a setting with `setting("NAME")`, never `process.env.NAME`
// (test/config/config.test.ts fails on a stray read), so a typo in a name is a type error and a
// bad value is named clearly: at start (lib/http/check-config.ts lists every bad variable and
// the server exits 1) and again where it is read. `.env.example` and lib/config/README.md's settings
// table are generated from this table (`npm run config:docs`) and a test keeps them equal.
//
// Values are read from process.env on each call and parsed again only when their text changes,
// so a test (or `npm run admin`, which loads .env first: lib/config/load-env.ts) may change one
// between calls. An empty value counts as unset, as it usually means "commented out" in a .env.
//
// To add a setting: one entry below, then `npm run config:docs`.

/** A positive whole number (milliseconds, seconds, counts): anything else is a start-up error. */
function wholeNumber(fallback: number, min = 1) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`))
    .optional()
    .transform((value) => value ?? fallback);
}

/** Free text; checked where it is read when its format is richer than zod says (see `checkedBy`). */
const text = () => z.string().optional();

function url(example: string, fallback?: string) {
  return z
    .string()
    .trim()
    .refine((value) => URL.canParse(value), `must be a URL such as ${example}`)
    .optional()
    .transform((value) => value ?? fallback);
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

type Setting = {
  schema: z.ZodType<unknown, string | undefined>;
  /** the default as the docs show it ("—": unset) */
  shown: string;
  description: string;
  /** who reads it, when not the server (the docs say so) */
  scope?: "demo";
  /** a secret: .env.example leaves it empty and logs never show it */
  secret?: true;
};

export const SETTINGS = {
  DATABASE_URL: {
    schema: z
      .string()
      .trim()
      .regex(
        /^(file|libsql|https?|wss?):/,
        "must start with file:, libsql:, http(s): or ws(s): (file:./data/countersign.db, libsql://db.example.com)",
      )
      .optional()
      .transform((value) => value ?? "file:./data/countersign.db"),
    shown: "`file:./data/countersign.db`",
    description:
      "libSQL database: a file (embedded, WAL) or `libsql://…` / `http(s)://…` for a libSQL server or Turso",
  },
  DATABASE_AUTH_TOKEN: {
    schema: text(),
    shown: "—",
    description: "auth token for a libSQL server",
    secret: true,
  },
  HOSTNAME: {
    schema: text(),
    shown: "`127.0.0.1`",
    description:
      "address `npm start` listens on: an IP address (`0.0.0.0` or `::` for every interface) or `localhost`; a machine name (as Docker exports in `HOSTNAME`) is ignored with a warning",
  },
  PORT: {
    schema: wholeNumber(3000).pipe(z.number().max(65535, "must be a port, 1–65535")),
    shown: "`3000`",
    description: "port `npm start` listens on",
  },
  PUBLIC_URL: {
    schema: url("https://countersign.example.com"),
    shown: "`http://$HOSTNAME:$PORT`",
    description:
      "the app's address: base of the `reviewUrl` links, and the origin trusted for sign-in and session writes",
  },
  TRUSTED_PROXIES: {
    schema: text(),
    shown: "—",
    description:
      "comma-separated addresses or CIDR ranges (`10.0.0.0/8, ::1`) of the reverse proxies whose `X-Forwarded-For` to believe; unset, the client is the connection's address",
  },
  LOG_LEVEL: {
    schema: z.enum(LOG_LEVELS).optional().default("info"),
    shown: "`info`",
    description:
      "lowest level of the JSON log lines on standard output: `fatal`, `error`, `warn`, `info` (one line per request), `debug`, `trace` or `silent`",
  },
  COUNTERSIGN_QUIET: {
    schema: text(),
    shown: "—",
    description:
      "any value: `npm start` prints no sign-in instructions at start (the setup code of a fresh database is still printed)",
  },
  BETTER_AUTH_SECRET: {
    schema: text(),
    shown: "generated, kept in the database",
    description: "signs session cookies; set it to rotate, or to share one across deployments",
    secret: true,
  },
  COUNTERSIGN_SECRET_KEY: {
    schema: text(),
    shown: "—",
    description:
      "32 bytes (base64 or hex) that encrypt webhook and session secrets at rest; see Security",
    secret: true,
  },
  COUNTERSIGN_OLD_SECRET_KEYS: {
    schema: text(),
    shown: "—",
    description:
      "older keys, comma-separated, still read while rotating to a new `COUNTERSIGN_SECRET_KEY`",
    secret: true,
  },
  SETUP_CODE: {
    schema: text(),
    shown: "random, printed at start",
    description:
      "the one-time code first-run setup asks for (at least 12 characters), while no account exists",
    secret: true,
  },
  SETUP_ATTEMPTS_PER_MINUTE: {
    schema: wholeNumber(5),
    shown: "`5`",
    description: "wrong setup codes per minute, for the whole server (then `429`)",
  },
  SIGN_IN_ATTEMPTS_PER_MINUTE: {
    schema: wholeNumber(10),
    shown: "`10`",
    description: "sign-in attempts per client address per minute (then `429`)",
  },
  BEARER_FAILURES_PER_WINDOW: {
    schema: wholeNumber(30),
    shown: "`30`",
    description:
      "unknown bearer keys or tokens per client address per window (then `429` for that address)",
  },
  BEARER_FAILURE_WINDOW_SECS: {
    schema: wholeNumber(60),
    shown: "`60`",
    description: "that window",
  },
  CREDENTIAL_CHECK_MS: {
    schema: wholeNumber(2000),
    shown: "`2000`",
    description:
      "how often open streams and long-polls re-check that their key, token or session still holds",
  },
  EMBED_ALLOWED_ORIGINS: {
    schema: text(),
    shown: "—",
    description:
      "comma-separated origins (`https://desk.example.com`) that may frame `/embed/batches/{id}`",
  },
  CALLBACK_ALLOWED_HOSTS: {
    schema: text(),
    shown: "—",
    description:
      "`callbackUrl` targets allowed though loopback or private (names, IPs, CIDRs, `:port`); see Security",
  },
  MCP_GATEWAY_PLAIN_HTTP_HOSTS: {
    schema: text(),
    shown: "—",
    description:
      "hosts (as `CALLBACK_ALLOWED_HOSTS`) a hosted MCP gateway may send its headers to over plain `http://`; loopback always may",
  },
  HISTORY_EXPORT_CALL_LIMIT: {
    schema: wholeNumber(50_000),
    shown: "`50000`",
    description: "most calls one history export holds (the file name ends in `-partial` when cut)",
  },
  MAX_BODY_BYTES: {
    schema: wholeNumber(4 * 1024 * 1024),
    shown: "`4194304`",
    description: "request body limit (`413` above it)",
  },
  HEADERS_TIMEOUT_MS: {
    schema: wholeNumber(10_000),
    shown: "`10000`",
    description: "`npm start`: time to receive a request's headers",
  },
  REQUEST_TIMEOUT_MS: {
    schema: wholeNumber(30_000),
    shown: "`30000`",
    description:
      "`npm start`: time to receive a whole request, body included (`408`); answers may take longer",
  },
  SHUTDOWN_GRACE_MS: {
    schema: wholeNumber(10_000),
    shown: "`10000`",
    description:
      "on SIGTERM, how long `npm start` waits for open requests (streams end at once) before exiting",
  },
  STREAMS_PER_CALLER: {
    schema: wholeNumber(20),
    shown: "`20`",
    description:
      "event streams one agent key or one reviewer may hold open per server process (then `429`)",
  },
  STREAM_HEARTBEAT_MS: {
    schema: wholeNumber(15_000),
    shown: "`15000`",
    description: "interval of the SSE keep-alive comment",
  },
  EVENT_POLL_MS: {
    schema: wholeNumber(50),
    shown: "`50`",
    description:
      "how often a process with a stream or long-poll open polls the event log for other processes' events (none open: no polls)",
  },
  SWEEP_INTERVAL_MS: {
    schema: wholeNumber(1000),
    shown: "`1000`",
    description: "deadline and lease sweeper interval",
  },
  CLUSTER_LEASE_MS: {
    schema: wholeNumber(5000),
    shown: "`5000`",
    description:
      "one instance over a database runs the sweeps and outboxes, under a lease it renews every third of this; another takes over within about this after it dies",
  },
  AUDIT_HEAD_LOG_MS: {
    schema: wholeNumber(300_000),
    shown: "`300000`",
    description:
      "how often the server logs the event log's chain head (seq and hash) when it moved: an anchor kept outside the database (`audit verify`)",
  },
  WEBHOOK_POLL_MS: {
    schema: wholeNumber(1000),
    shown: "`1000`",
    description: "how often due webhook deliveries are looked for",
  },
  WEBHOOK_RETRY_BASE_MS: {
    schema: wholeNumber(1000),
    shown: "`1000`",
    description: "first webhook retry delay (doubles per attempt, up to 1 h)",
  },
  SMTP_URL: {
    schema: url("smtp://user:password@mail.example.com:587"),
    shown: "—",
    description:
      "the mail server for notification emails, as nodemailer reads it (`smtp://user:pass@host:587`, `smtps://…:465`); unset, no email is planned or sent",
    secret: true,
  },
  MAIL_FROM: {
    schema: z
      .string()
      .trim()
      .optional()
      .transform((value) => value || "Countersign <countersign@localhost>"),
    shown: "`Countersign <countersign@localhost>`",
    description: "the sender of notification emails",
  },
  SMTP_TIMEOUT_MS: {
    schema: wholeNumber(15_000),
    shown: "`15000`",
    description:
      "how long each phase of a send (connect, greeting, any silence) may take before the outbox retries it",
  },
  NOTIFY_POLL_MS: {
    schema: wholeNumber(1000),
    shown: "`1000`",
    description: "how often the event log is turned into notifications and due ones are sent",
  },
  NOTIFY_RETRY_BASE_MS: {
    schema: wholeNumber(5000),
    shown: "`5000`",
    description:
      "first email retry delay (doubles per attempt, up to 1 h; failed after 10 attempts)",
  },
  NOTIFY_DIGEST_UNIT_MS: {
    schema: wholeNumber(60_000),
    shown: "`60000`",
    description: 'length of one "minute" of a reviewer\'s digest interval (tests shorten it)',
  },
  CARD_LINK_TTL_SECS: {
    schema: wholeNumber(72 * 3600),
    shown: "`259200` (72 h)",
    description: "how long a card link in an email works",
  },
  SLACK_BOT_TOKEN: {
    schema: text(),
    shown: "—",
    description:
      "the Slack app's bot token (`xoxb-…`); unset, nothing is posted to Slack (see Slack)",
    secret: true,
  },
  SLACK_SIGNING_SECRET: {
    schema: text(),
    shown: "—",
    description: "the Slack app's signing secret; unset, `/api/slack/interactions` answers `404`",
    secret: true,
  },
  SLACK_API_URL: {
    schema: url("https://slack.com/api/", "https://slack.com/api/"),
    shown: "`https://slack.com/api/`",
    description: "where the Slack Web API is (the tests point it at a local stand-in)",
  },
  SLACK_POLL_MS: {
    schema: wholeNumber(1000),
    shown: "`1000`",
    description:
      "how often the event log is turned into Slack posts and updates and due ones are sent",
  },
  SLACK_RETRY_BASE_MS: {
    schema: wholeNumber(5000),
    shown: "`5000`",
    description:
      "first Slack retry delay (doubles per attempt, up to 1 h; a post fails after 8 attempts)",
  },
  SLACK_TIMEOUT_MS: {
    schema: wholeNumber(5000),
    shown: "`5000`",
    description: "how long one Slack Web API call may take",
  },
  METRICS_TOKEN: {
    // a short token is guessed (wrong ones are rate limited as bearer guesses, but slowly is enough)
    schema: z
      .string()
      .trim()
      .min(32, "must be at least 32 characters (openssl rand -hex 32 makes one)")
      .optional(),
    shown: "—",
    description:
      "the bearer token a Prometheus scraper sends to `GET /metrics`, at least 32 characters (`openssl rand -hex 32`); unset, `/metrics` answers `404` (see Metrics)",
    secret: true,
  },
  COUNTERSIGN_URL: {
    schema: url("http://127.0.0.1:3000"),
    shown: "`http://127.0.0.1:$PORT`",
    description: "the app `npm run demo` talks to (its `--url` wins)",
    scope: "demo",
  },
  COUNTERSIGN_AGENT_KEY: {
    schema: text(),
    shown: "—",
    description:
      "an agent key for `npm run demo` to use instead of creating its own keys in the database",
    scope: "demo",
    secret: true,
  },
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<N extends SettingName> = z.output<(typeof SETTINGS)[N]["schema"]>;

/** A setting whose value cannot be used; the message names the variable and what it must be. */
export class ConfigError extends Error {}

const parsed = new Map<SettingName, { raw: string | undefined; value: unknown }>();

/** The raw text of a setting, `undefined` when unset or empty. */
function rawValue(name: SettingName): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** The values of the settings marked secret, as set now (for the log to scrub: lib/log/logger.ts). */
export function secretSettingValues(): { name: SettingName; value: string }[] {
  return (Object.keys(SETTINGS) as SettingName[]).flatMap((name) => {
    const value = "secret" in SETTINGS[name] ? rawValue(name) : undefined;
    return value === undefined ? [] : [{ name, value: value.trim() }];
  });
}

/** Why `name`'s current value is unusable, or null when it is fine. */
export function settingProblem(name: SettingName): string | null {
  const result = SETTINGS[name].schema.safeParse(rawValue(name));
  if (result.success) return null;
  return `${name}: ${result.error.issues.map((issue) => issue.message).join("; ")}`;
}

/** The parsed value of one setting (its default when unset); throws ConfigError when it is bad. */
export function setting<N extends SettingName>(name: N): ValueOf<N> {
  const raw = rawValue(name);
  const known = parsed.get(name);
  if (known && known.raw === raw) return known.value as ValueOf<N>;
  const result = SETTINGS[name].schema.safeParse(raw);
  if (!result.success) throw new ConfigError(settingProblem(name)!);
  parsed.set(name, { raw, value: result.data });
  return result.data as ValueOf<N>;
}
