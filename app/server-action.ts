import { z } from "zod";
import { parseInput } from "@/lib/input/parse";
import type { ReviewerActor } from "@/lib/auth/actor";
import { actionError, type ActionFailure, type ActionResult } from "./action-result";
import { actionReviewer } from "./(reviewer)/current-reviewer";

// The edge of every server action, as lib/http/api-route.ts is the edge of every API route:
// authenticate (401), parse the arguments (400), call the verb, and answer any failure as an
// ActionResult instead of throwing. It lives in app/, not lib/http/, because a server action is a
// Next.js thing and the reviewer comes from the session cookie through next/headers, which lib/
// (shared with the CLI, the tests and the API routes) must not import. The verbs still check
// queue membership and validate their own input: this only keeps each action file to its verbs.

/** One zod schema per positional argument of the action, in order. */
type ArgSchemas = readonly z.ZodType[];
/** What the action is called with: the schemas' inputs (trailing optional schemas may be left out). */
type ArgsIn<A extends ArgSchemas> = z.input<z.ZodTuple<A, null>>;
/** What the verb is given: the schemas' outputs. */
type ArgsOut<A extends ArgSchemas> = z.output<z.ZodTuple<A, null>>;

export type ActionOptions<Actor, A extends ArgSchemas, T extends object> = {
  /**
   * Called when the verb threw (never for a refused session or bad arguments), with the failure
   * already mapped: answer it, or another, e.g. with a `current` the UI needs on a conflict.
   */
  onError?: (
    failure: ActionFailure,
    context: { error: unknown; actor: Actor; args: ArgsOut<A> },
  ) => ActionResult<T> | Promise<ActionResult<T>>;
};

/**
 * A server action from its argument schemas and its verb. `authenticate` throws (an
 * `UnauthenticatedError`) to refuse the caller; the verb's result is answered as `{ ok: true, ...result }`.
 * Exported for the wrapper's own test; actions use `reviewerAction` or `publicAction`.
 */
export function validatedAction<Actor, const A extends ArgSchemas, T extends object>(
  authenticate: () => Promise<Actor>,
  argSchemas: A,
  verb: (actor: Actor, args: ArgsOut<A>) => Promise<T>,
  options: ActionOptions<Actor, A, T> = {},
): (...args: ArgsIn<A>) => Promise<ActionResult<T>> {
  const schema = z.tuple(argSchemas as unknown as [z.ZodType]);
  return async (...given: unknown[]): Promise<ActionResult<T>> => {
    let ready: { actor: Actor; args: ArgsOut<A> } | null = null;
    try {
      const actor = await authenticate();
      // As a function's parameters: an argument left out is undefined, an extra one ignored.
      const args = parseInput(
        schema,
        argSchemas.map((_, i) => given[i]),
      ) as unknown as ArgsOut<A>;
      ready = { actor, args };
      return { ok: true as const, ...(await verb(actor, args)) };
    } catch (error) {
      const failure = actionError(error);
      return ready && options.onError ? options.onError(failure, { error, ...ready }) : failure;
    }
  };
}

/**
 * An action of the signed-in reviewer (`unauthenticated` without a session):
 *
 *     export const archiveQueueAction = reviewerAction([Id], async (reviewer, [queueId]) => ({
 *       queue: await archiveQueue(reviewer, queueId),
 *     }));
 *
 * Give a schema per argument (`Id` from lib/ids.ts for ids, `z.unknown()` for input the verb
 * parses itself, so its field errors keep their paths) and return the answer's fields.
 */
export function reviewerAction<const A extends ArgSchemas, T extends object>(
  argSchemas: A,
  verb: (reviewer: ReviewerActor, args: ArgsOut<A>) => Promise<T>,
  options?: ActionOptions<ReviewerActor, A, T>,
) {
  return validatedAction(actionReviewer, argSchemas, verb, options);
}

/**
 * An action anyone may call, signed in or not (first-run setup, redeeming a link): its input is
 * the authority, and its verb checks it.
 */
export function publicAction<const A extends ArgSchemas, T extends object>(
  argSchemas: A,
  verb: (args: ArgsOut<A>) => Promise<T>,
  options?: ActionOptions<null, A, T>,
) {
  return validatedAction(
    async () => null,
    argSchemas,
    (_, args) => verb(args),
    options,
  );
}
