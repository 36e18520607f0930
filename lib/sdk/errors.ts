// Every failure the SDK reports is a CountersignError: the API's own errors keep their contract
// code, and the SDK adds a few codes of its own (status 0) for what never got an answer.

/** The API contract's error codes. */
export type ApiErrorCode =
  | "invalid_request"
  | "invalid_json"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
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
  | "deadline_near"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "unavailable"
  | "internal_error";

/** Codes the SDK gives failures that have no API answer (status 0), or answers it cannot read. */
export type ClientErrorCode =
  /** no answer: connection refused or dropped, DNS, a request timeout (after the retries) */
  | "network_error"
  /** `waitForDecision`'s `timeoutMs` passed with the batch still pending */
  | "wait_timeout"
  /** an answer that is not the contract's JSON (a proxy's error page, say) */
  | "invalid_response";

export type ErrorCode = ApiErrorCode | ClientErrorCode;

export type Issue = { path: string; message: string };

export class CountersignError extends Error {
  /** the HTTP status, or 0 when no answer came */
  readonly status: number;
  /** the contract's code (or a client code; unknown server codes are passed through as strings) */
  readonly code: ErrorCode | (string & {});
  /** on a 409: the resource as it is now */
  readonly current: unknown;
  /** on a 400 invalid_request: what was wrong, field by field */
  readonly issues: Issue[];
  /** any other fields of the error body (`holder` and `leaseExpiresAt` on already_claimed…) */
  readonly details: Record<string, unknown>;
  /** the Retry-After of a 429 or 503, in milliseconds */
  readonly retryAfterMs: number | null;

  constructor(init: {
    status: number;
    code: ErrorCode | (string & {});
    message: string;
    current?: unknown;
    issues?: Issue[];
    details?: Record<string, unknown>;
    retryAfterMs?: number | null;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "CountersignError";
    this.status = init.status;
    this.code = init.code;
    this.current = init.current ?? null;
    this.issues = init.issues ?? [];
    this.details = init.details ?? {};
    this.retryAfterMs = init.retryAfterMs ?? null;
  }

  is(code: ErrorCode): boolean {
    return this.code === code;
  }

  /** `error` is a CountersignError, with `code` when one is given. */
  static is(error: unknown, code?: ErrorCode): error is CountersignError {
    return error instanceof CountersignError && (code === undefined || error.code === code);
  }
}

/** Builds the error for a non-2xx answer from its status and (possibly non-JSON) body. */
export function errorFromResponse(
  status: number,
  body: unknown,
  retryAfterMs: number | null,
): CountersignError {
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!error || typeof error.code !== "string") {
    return new CountersignError({
      status,
      code: status === 429 ? "rate_limited" : "invalid_response",
      message: `The server answered ${status} without a Countersign error body.`,
      retryAfterMs,
    });
  }
  const { code, message, current, issues, ...details } = error;
  return new CountersignError({
    status,
    code,
    message: typeof message === "string" ? message : `The server answered ${status} (${code}).`,
    current,
    issues: Array.isArray(issues) ? (issues as Issue[]) : [],
    details,
    retryAfterMs,
  });
}
