import { beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { ReviewerActor } from "@/lib/auth/actor";
import { ConflictError, ForbiddenError, NotFoundError } from "@/lib/errors";
import { Id } from "@/lib/ids";

// The one edge every server action goes through (app/server-action.ts): a caller without a
// session is refused before anything runs, bad arguments are answered with field errors and never
// reach the verb, a verb's contract error becomes the ActionResult the UI renders (a conflict
// keeping its `current`), and the onError hook sees only the verb's failures. The session comes
// from the request's cookies: here a stand-in for next/headers and the session lookup.

const session = vi.hoisted(() => ({
  user: null as null | { id: string; name: string; email: string },
}));
vi.mock("next/headers", () => ({
  headers: async () => new Headers(),
  cookies: async () => ({ get: () => undefined }),
}));
vi.mock("@/lib/auth/better-auth", () => ({ sessionUser: async () => session.user }));

const { publicAction, reviewerAction, validatedAction } = await import("@/app/server-action");

const DANA = { id: "u-dana", name: "Dana Reviewer", email: "dana@example.com" };
const signedIn = async (): Promise<ReviewerActor> => ({ kind: "reviewer", ...DANA });

beforeEach(() => {
  session.user = null;
});

describe("reviewerAction", () => {
  it("refuses a caller without a session, and runs nothing", async () => {
    const verb = vi.fn(async () => ({ done: true }));
    const action = reviewerAction([Id], verb);
    expect(await action("b-1")).toEqual({
      ok: false,
      code: "unauthenticated",
      message: "Your session ended. Sign in again.",
    });
    expect(verb).not.toHaveBeenCalled();
  });

  it("gives the verb the session's reviewer and the parsed arguments, and answers its fields", async () => {
    session.user = DANA;
    const verb = vi.fn(async (_reviewer: ReviewerActor, [batchId]: [string, unknown?]) => ({
      batch: { id: batchId },
    }));
    const action = reviewerAction([Id, z.unknown().optional()], verb);
    expect(await action("b-1")).toEqual({ ok: true, batch: { id: "b-1" } });
    expect(verb).toHaveBeenCalledWith({ kind: "reviewer", ...DANA }, ["b-1", undefined]);
  });

  it("checks the session before the arguments: a signed-out caller learns nothing of them", async () => {
    const action = reviewerAction([Id], async () => ({}));
    expect(await action("")).toMatchObject({ ok: false, code: "unauthenticated" });
  });
});

describe("validatedAction", () => {
  it("answers bad arguments with field errors and never calls the verb", async () => {
    const verb = vi.fn(async () => ({}));
    const action = validatedAction(signedIn, [Id, Id, z.unknown()], verb);
    const answer = await action("b-1", "x".repeat(201), { outcome: "approve" });
    expect(answer).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: "Use at most 200 characters.",
      fieldErrors: { "1": "Use at most 200 characters." },
      issues: [{ path: "1" }],
    });
    expect(verb).not.toHaveBeenCalled();
  });

  it("takes a left-out argument as undefined and ignores an extra one, as a function does", async () => {
    const verb = vi.fn(async () => ({}));
    const action = validatedAction(signedIn, [Id, z.unknown()], verb) as (
      ...args: unknown[]
    ) => Promise<unknown>;
    expect(await action("b-1")).toEqual({ ok: true });
    expect(verb).toHaveBeenLastCalledWith(expect.anything(), ["b-1", undefined]);
    expect(await action("b-1", 2, "extra")).toEqual({ ok: true });
    expect(verb).toHaveBeenLastCalledWith(expect.anything(), ["b-1", 2]);
    expect(await action()).toMatchObject({ ok: false, fieldErrors: { "0": "Enter a value." } });
  });

  it("maps a contract error the verb throws to its code and message", async () => {
    const action = validatedAction(signedIn, [Id], async () => {
      throw new NotFoundError("Batch");
    });
    expect(await action("b-1")).toEqual({
      ok: false,
      code: "not_found",
      message: "Batch not found.",
    });
  });

  it("keeps a conflict's current state in the answer", async () => {
    const current = { id: "c-1", status: "approved", revision: 2 };
    const action = validatedAction(signedIn, [Id], async () => {
      throw new ConflictError("already_decided", "Approved by Dana Reviewer 4 s ago.", current);
    });
    expect(await action("c-1")).toEqual({
      ok: false,
      code: "already_decided",
      message: "Approved by Dana Reviewer 4 s ago.",
      current,
    });
  });

  it("never answers an unknown error's message", async () => {
    const action = validatedAction(signedIn, [], async () => {
      throw new Error("SQLITE_CORRUPT at /var/lib/secret.db");
    });
    const answer = await action();
    expect(answer).toEqual({
      ok: false,
      code: "internal_error",
      message: "Something went wrong on the server; try again.",
    });
  });

  it("lets onError answer a verb's failure differently, with the actor and the parsed arguments", async () => {
    const error = new ConflictError("already_decided", "Decided already.", { callId: "c-1" });
    const onError = vi.fn(async (failure, { actor, args }) => ({
      ...failure,
      current: { batchId: args[0], seenBy: actor.name },
    }));
    const action = validatedAction(
      signedIn,
      [Id],
      async () => {
        throw error;
      },
      { onError },
    );
    expect(await action("b-1")).toMatchObject({
      ok: false,
      code: "already_decided",
      current: { batchId: "b-1", seenBy: "Dana Reviewer" },
    });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: "already_decided" }), {
      error,
      actor: expect.objectContaining({ id: DANA.id }),
      args: ["b-1"],
    });
  });

  it("does not call onError for a refused caller or bad arguments", async () => {
    const onError = vi.fn((failure) => failure);
    const refused = validatedAction(
      async () => {
        throw new ForbiddenError("No.");
      },
      [Id],
      async () => ({}),
      { onError },
    );
    expect(await refused("b-1")).toMatchObject({ code: "forbidden" });
    const badInput = validatedAction(signedIn, [Id], async () => ({}), { onError });
    expect(await badInput("")).toMatchObject({ code: "invalid_request" });
    expect(onError).not.toHaveBeenCalled();
  });
});

describe("publicAction", () => {
  it("runs without a session, and its onError can put a refusal on a field", async () => {
    const action = publicAction(
      [z.unknown()],
      async () => {
        throw new ForbiddenError("That setup code is not the one the server printed.");
      },
      {
        onError: (failure) => ({ ...failure, fieldErrors: { setupCode: failure.message } }),
      },
    );
    expect(await action({ setupCode: "nope" })).toEqual({
      ok: false,
      code: "forbidden",
      message: "That setup code is not the one the server printed.",
      fieldErrors: { setupCode: "That setup code is not the one the server printed." },
    });
  });
});
