import type { z } from "zod";
import type { Actor } from "@/lib/auth/actor";
import type { Credential } from "@/lib/auth/credential-watch";
import type { Tag } from "./tags";

// One definition per endpoint: everything about it, written once. From the list of them
// (lib/contract/endpoints/index.ts) come the route table both servers dispatch from (Next.js's
// catch-all app/api/v1/[...path]/route.ts under `next dev`, lib/http/node-api.ts under
// `npm start`: app/api/v1/routes.ts builds it), the OpenAPI document (lib/contract/openapi.ts)
// and the endpoint lists the tests walk.

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** `"/runs/{runId}/gated-calls/{callId}/use"` → `{ runId: string; callId: string }` */
export type ParamsOf<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<Rest>
  : unknown;

/** What an authenticated endpoint's handler is given (the edge has read the body and the caller). */
export type HandlerArgs<Path extends string> = {
  request: Request;
  /** the path's `{params}`, decoded */
  params: ParamsOf<Path>;
  /** the query string as a record (the last value of a repeated name); the verb parses it */
  query: Record<string, string>;
  /** the JSON body (undefined for a GET or an empty body); the verb parses it with `body` below */
  body: unknown;
  actor: Actor;
  /** what the actor authenticated with: streams and long-polls end when it is revoked */
  credential: Credential;
};

type Described<Path extends string> = {
  method: Method;
  /** relative to /api/v1, as the OpenAPI document spells it */
  path: Path;
  /** camelCase verb: generated clients name their methods after it */
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /**
   * The body's schema, as the verb parses it (the verb stays the one validator: the same verbs
   * serve the server actions and the CLI). The document shows it; the handler hands the body on.
   */
  body?: z.ZodType;
  /** the query's schema, as the verb parses it (the document lists each field) */
  query?: z.ZodObject;
  /** takes an `Idempotency-Key` header */
  idempotent?: boolean;
  /** the success answer: its status and the name of its schema among the document's components */
  ok: { status: number; schema: string; description?: string };
  /** the success answer's media types, when it is not one JSON schema */
  content?: Record<string, unknown>;
  /** the error statuses it answers (besides those every request can meet: openapi.ts) */
  errors: number[];
};

/**
 * Who may call it. "session": a signed-in reviewer's session cookie only, never a key or token
 * (what leads to a new credential: lib/auth/require-session.ts); `signedIn` names the act in the
 * 403 (`"Agent keys are created"`). The dispatch refuses a caller of another kind than `auth`
 * names before the handler runs (app/api/v1/routes.ts); the verbs check the kind too, and the
 * caller's access; the endpoint matrix (test/auth/endpoint-matrix.test.ts) checks that each kind
 * the document names is accepted and the others are refused.
 */
type Authenticated =
  | { auth: "agent" | "reviewer" | "either"; signedIn?: never }
  | { auth: "session"; signedIn: string };

type Handled<Path extends string> = {
  // Method syntax: a list holds endpoints of different paths (their handlers' params differ).
  handler(args: HandlerArgs<Path>): Promise<Response>;
};

export type Endpoint<Path extends string = string> = Described<Path> &
  Authenticated &
  Handled<Path>;

/**
 * An endpoint outside the contract's authentication and outside the document: no body read, no
 * caller (the document itself, openapi.json).
 */
export type PublicEndpoint<Path extends string = string> = {
  method: Method;
  path: Path;
  auth: "none";
  summary: string;
  handler(args: { request: Request; params: ParamsOf<Path> }): Response | Promise<Response>;
};

export type AnyEndpoint = Endpoint | PublicEndpoint;

/** Typed by its path: the handler's `params` are the path's `{names}`. */
export function defineEndpoint<const Path extends string>(endpoint: Endpoint<Path>): Endpoint {
  return endpoint as unknown as Endpoint;
}

export function definePublicEndpoint<const Path extends string>(
  endpoint: PublicEndpoint<Path>,
): PublicEndpoint {
  return endpoint as unknown as PublicEndpoint;
}

/** The names of a path's `{params}`, in order. */
export function paramNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
}
