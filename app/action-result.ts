import { asApiError, countUnavailable, UnavailableError, type Issue } from "@/lib/errors";
import { log } from "@/lib/log/logger";

/**
 * What every server action answers: never a throw for an expected outcome (a conflict, bad
 * input); the UI renders the failure, with the contract's code and the current state if any.
 */
export type ActionResult<T extends object = object> =
  | ({ ok: true } & T)
  | { ok: false; code: string; message: string; issues?: Issue[]; current?: unknown };

export type ActionFailure = Extract<ActionResult, { ok: false }>;

export function actionError(error: unknown): ActionFailure {
  // A locked or full database answers `unavailable` ("nothing was changed, try again"), as the API does.
  const known = asApiError(error);
  if (known) {
    if (known instanceof UnavailableError) countUnavailable("action");
    const details = known.extra as { issues?: Issue[]; current?: unknown };
    return {
      ok: false,
      code: known.code,
      message: known.message,
      ...(details.issues ? { issues: details.issues } : {}),
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
