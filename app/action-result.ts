import {
  asApiError,
  countUnavailable,
  InvalidRequestError,
  UnavailableError,
  type Issue,
} from "@/lib/errors";
import { fieldErrorsFrom, type IssueDetail } from "@/lib/forms/plain-issues";
import { log } from "@/lib/log/logger";

/**
 * What every server action answers: never a throw for an expected outcome (a conflict, bad
 * input); the UI renders the failure, with the contract's code and the current state if any.
 */
export type ActionResult<T extends object = object> =
  | ({ ok: true } & T)
  | {
      ok: false;
      code: string;
      message: string;
      issues?: Issue[];
      /** invalid input: one plain sentence per field, keyed by its path (`argPredicates.0.path`) */
      fieldErrors?: Record<string, string>;
      current?: unknown;
    };

export type ActionFailure = Extract<ActionResult, { ok: false }>;

export function actionError(error: unknown): ActionFailure {
  // A locked or full database answers `unavailable` ("nothing was changed, try again"), as the API does.
  const known = asApiError(error);
  if (known) {
    if (known instanceof UnavailableError) countUnavailable("action");
    const details = known.extra as { issues?: Issue[]; current?: unknown };
    const fieldErrors =
      known instanceof InvalidRequestError ? plainFieldErrors(known, details.issues ?? []) : null;
    return {
      ok: false,
      code: known.code,
      message: fieldErrors ? summarize(fieldErrors) : known.message,
      ...(details.issues ? { issues: details.issues } : {}),
      ...(fieldErrors ? { fieldErrors } : {}),
      ...(details.current !== undefined ? { current: details.current } : {}),
    };
  }
  // An unknown error's message may hold internals: log it, answer plainly.
  log().error({ err: error }, "Unexpected error in a server action");
  return {
    ok: false,
    code: "internal_error",
    message: "Something went wrong on the server; try again.",
  };
}

/**
 * A refused input's problems, worded for the form: from the schema's own issues when a schema
 * failed, else from the issues a verb wrote by hand (`{ path: "escalationQueueId", … }`).
 */
function plainFieldErrors(error: InvalidRequestError, issues: Issue[]): Record<string, string> {
  const detailed: readonly IssueDetail[] =
    error.details.length > 0
      ? error.details
      : issues.map((issue) => ({
          code: "custom",
          path: issue.path === "(body)" ? [] : issue.path.split("."),
          message: issue.message,
        }));
  const errors = fieldErrorsFrom(detailed);
  return Object.keys(errors).length > 0 ? errors : { "": "Check what you entered and try again." };
}

/** The one-line message beside the field errors, for a screen that shows only `message`. */
function summarize(fieldErrors: Record<string, string>): string {
  const sentences = Object.values(fieldErrors);
  return sentences.length === 1 ? sentences[0]! : `${sentences.length} fields need a change.`;
}
