// The API contract's error codes, as values. Verbs throw these; edges map them with `toResponse`.

import { sqliteCodeOf } from "@/db/sqlite-error";
import type { IssueDetail } from "@/lib/forms/plain-issues";
import { log } from "@/lib/log/logger";
import { jsonText } from "@/lib/json-response";

/** Every `error.code` the API answers with (the OpenAPI document lists them). */
export const ERROR_CODES = [
  "invalid_request",
  "invalid_json",
  "unauthenticated",
  "forbidden",
  "not_found",
  "already_decided",
  "stale_revision",
  "not_pending",
  "already_claimed",
  "claimed_by_other",
  "not_ready",
  "claim_lost",
  "run_terminal",
  "idempotency_conflict",
  "already_exists",
  "queue_archived",
  "last_admin",
  "plan_required",
  "link_used",
  "link_expired",
  "key_revoked",
  "deadline_near",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "method_not_allowed",
  "unavailable",
  "internal_error",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export type Issue = { path: string; message: string };

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** Headers the answer carries besides its body (`Allow`, `Retry-After`). */
  get headers(): Record<string, string> {
    return {};
  }

  // Typed with the extra fields (`issues`, `current`, …): a spread index signature would drop them.
  toJSON(): { error: { code: ErrorCode; message: string } & Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

/** The request is malformed or fails its schema (400). */
export class InvalidRequestError extends ApiError {
  /**
   * The validator's own issues (bounds, expected types), when a schema failed. Kept off the
   * response, whose `issues` stay `{ path, message }`; server actions word them for forms.
   */
  readonly details: readonly IssueDetail[];

  constructor(message: string, issues: Issue[] = [], details: readonly IssueDetail[] = []) {
    super("invalid_request", 400, message, { issues });
    this.details = details;
  }
}

/** The body is not JSON at all (400). */
export class InvalidJsonError extends ApiError {
  constructor(message = "The request body is not valid JSON.") {
    super("invalid_json", 400, message);
  }
}

/**
 * The client closed its connection before its request body arrived whole (lib/http/read-body.ts):
 * nothing was done, and nobody will read this answer. An error of the client's, not the server's:
 * the request line logs it as a 400, never as an unexpected error.
 */
export class ClientGoneError extends InvalidRequestError {
  constructor() {
    super("The connection closed before the request body arrived whole; nothing was done.");
  }
}

/** No credentials, or credentials that match nobody (401). */
export class UnauthenticatedError extends ApiError {
  constructor(message = "Send a valid agent key or reviewer token as 'Authorization: Bearer …'.") {
    super("unauthenticated", 401, message);
  }
}

/** The caller is known but this surface is not theirs, e.g. an agent key on a reviewer endpoint (403). */
export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super("forbidden", 403, message);
  }
}

/** Missing, or present but not visible to the caller: the two must look the same (404). */
export class NotFoundError extends ApiError {
  constructor(what: string) {
    super("not_found", 404, `${what} not found.`);
  }
}

/** Someone else moved first; `current` is the resource as it is now (409). */
export class ConflictError extends ApiError {
  constructor(
    code: Extract<
      ErrorCode,
      | "already_decided"
      | "stale_revision"
      | "not_pending"
      | "already_claimed"
      | "claimed_by_other"
      | "not_ready"
      | "claim_lost"
      | "run_terminal"
      | "idempotency_conflict"
      | "already_exists"
      | "queue_archived"
      | "last_admin"
      | "plan_required"
      | "link_used"
      | "link_expired"
      | "key_revoked"
      | "deadline_near"
    >,
    message: string,
    current: unknown,
    extra: Record<string, unknown> = {},
  ) {
    super(code, 409, message, { current, ...extra });
  }
}

/** The body is over the configured limit (413). */
export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super("payload_too_large", 413, `The request body is larger than ${limitBytes} bytes.`);
  }
}

/** The body is not `application/json` (415). */
export class UnsupportedMediaTypeError extends ApiError {
  constructor() {
    super("unsupported_media_type", 415, "Send the body as 'Content-Type: application/json'.");
  }
}

/** The database cannot take the request now (locked, busy, out of disk); retry after `retryAfterSecs` (503). */
export class UnavailableError extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSecs: number,
  ) {
    super("unavailable", 503, message);
  }
}

// SQLite's own codes (base or extended, as @libsql/client reports them) for a database that is
// there but cannot answer now: another process holds the lock (BUSY/LOCKED, after the busy
// timeout), or the disk is full (FULL, or an IOERR variant such as IOERR_WRITE/IOERR_SHMSIZE when
// a file cannot grow). SQLite rolls the statement or transaction back, so nothing was written.
const TRANSIENT_DATABASE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|PROTOCOL)(_|$)/;

/**
 * The error as the contract sees it: an ApiError as is, a transient database failure as a 503
 * `unavailable` (drizzle wraps the driver's error in `cause`), anything else null.
 */
export function asApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  const code = sqliteCodeOf(error);
  if (code === null || !TRANSIENT_DATABASE_CODES.test(code)) return null;
  // the statement (drizzle's message names it) tells an operator which write met the lock
  log().warn(
    { code },
    `The database is unavailable (${code}); answering 503. ${String((error as Error).message).slice(0, 300)}`,
  );
  return /^SQLITE_(BUSY|LOCKED|PROTOCOL)/.test(code)
    ? new UnavailableError("The database is busy; nothing was changed. Try again shortly.", 1)
    : new UnavailableError(
        "The database cannot write now; nothing was changed. Try again later.",
        5,
      );
}

/** The endpoint exists but does not serve this method; `allow` lists the ones it does (405). */
export class MethodNotAllowedError extends ApiError {
  constructor(
    method: string,
    readonly allow: string[],
  ) {
    super("method_not_allowed", 405, `${method} is not served here; use ${allow.join(", ")}.`, {
      allow,
    });
  }

  override get headers(): Record<string, string> {
    return { allow: this.allow.join(", ") };
  }
}

/** Too many failed attempts from this client; try again in `retryAfterSecs` (429). */
export class RateLimitedError extends ApiError {
  constructor(
    readonly retryAfterSecs: number,
    message: string,
  ) {
    super("rate_limited", 429, message, { retryAfterSecs });
  }

  override get headers(): Record<string, string> {
    return { "retry-after": String(this.retryAfterSecs) };
  }
}

// How many requests this process answered 503, by surface: /metrics reports it
// (countersign_unavailable_responses_total). A plain count on globalThis, not a prom-client
// metric: this module is also loaded where prom-client is not (proxy.ts, client components).
const unavailableCounts = ((
  globalThis as { __countersignUnavailable?: Record<string, number> }
).__countersignUnavailable ??= {});

export function countUnavailable(surface: "api" | "action"): void {
  unavailableCounts[surface] = (unavailableCounts[surface] ?? 0) + 1;
}

/** Answers 503 so far in this process, by surface. */
export function unavailableAnswers(): Readonly<Record<string, number>> {
  return unavailableCounts;
}

/** Turns any thrown value into the contract's error response; unknown errors never leak their message. */
export function toResponse(error: unknown): Response {
  const known = asApiError(error);
  if (known) {
    if (known instanceof UnavailableError) countUnavailable("api");
    const headers: Record<string, string> =
      known instanceof UnavailableError
        ? { "retry-after": String(known.retryAfterSecs) }
        : known.headers;
    return jsonText(JSON.stringify(known.toJSON()), known.status, headers);
  }
  log().error({ err: error }, "Unexpected error while serving a request");
  return Response.json(
    { error: { code: "internal_error", message: "Something went wrong on our side." } },
    { status: 500 },
  );
}
