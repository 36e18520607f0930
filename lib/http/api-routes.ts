import * as health from "@/app/api/health/route";
import { API_V1_ROUTES } from "@/app/api/v1/routes";
import * as hostedMcpGateway from "@/app/api/mcp/gateways/[name]/route";

// The API routes the production server (lib/http/server.ts) calls itself, without Next.js's
// routing and rendering pipeline, which cost several ms of CPU per request: every endpoint under
// /api/v1 (each defined once in lib/contract/endpoints; app/api/v1/routes.ts builds their routes,
// which Next's catch-all app/api/v1/[...path] serves from under `next dev`) and the two route
// files outside /api/v1 on an agent's path. Compiled once, when the server starts.
//
// This file reaches into app/ (the one file of lib/ that does: test/unit/import-graph.test.ts):
// the routes sit at the top of the import graph, above the verbs they call, and the server that
// dispatches them is in lib/http, which the verbs' own folders import (lib/mcp-gateways calls the
// API in-process through matchRoute below). Importing lib/contract from here would close a circle
// among the folders of lib/; app/ is outside them.
//
// Left to Next.js: app/api/auth (better-auth's handler, which expects Next's request), app/api/mcp
// (the MCP transport) and app/api/slack (Slack's callbacks); none is on an agent's hot path. The
// hosted MCP gateways (app/api/mcp/gateways) are here: every tools/call of an agent behind one
// goes through it.

export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

export type RouteContext = { params: Promise<Record<string, string>> };

type Answer = Response | Promise<Response>;

/**
 * A route's handlers: one per method it answers, as a route file exports them. Method signatures (which TypeScript
 * checks loosely), so a handler typed for its own params (`{ runId: string }`) fits.
 */
export interface RouteModule {
  GET?(request: Request, context: RouteContext): Answer;
  HEAD?(request: Request, context: RouteContext): Answer;
  POST?(request: Request, context: RouteContext): Answer;
  PUT?(request: Request, context: RouteContext): Answer;
  PATCH?(request: Request, context: RouteContext): Answer;
  DELETE?(request: Request, context: RouteContext): Answer;
  OPTIONS?(request: Request, context: RouteContext): Answer;
}

/** Pattern (as Next.js spells a route's folder under app/) → its handlers. */
export const API_ROUTES: Readonly<Record<string, RouteModule>> = {
  ...API_V1_ROUTES,
  "/api/health": health,
  // hosted MCP gateways: MCP sessions, their streams written back as any API answer's body
  "/api/mcp/gateways/[name]": hostedMcpGateway,
};

type Segment =
  | { kind: "static"; text: string }
  | { kind: "param"; name: string }
  | { kind: "rest"; name: string };

type CompiledRoute = { pattern: string; segments: Segment[]; module: RouteModule };

function compile(pattern: string, module: RouteModule): CompiledRoute {
  const segments = pattern
    .slice(1)
    .split("/")
    .map((part): Segment => {
      const rest = /^\[\.\.\.(\w+)\]$/.exec(part);
      if (rest) return { kind: "rest", name: rest[1]! };
      const param = /^\[(\w+)\]$/.exec(part);
      return param ? { kind: "param", name: param[1]! } : { kind: "static", text: part };
    });
  return { pattern, segments, module };
}

const RANK = { static: 0, param: 1, rest: 2 } as const;

/**
 * Next.js's precedence, segment by segment: a static segment before a dynamic one before a
 * catch-all (so /policy-rules/try is not a rule called "try", and unknown paths fall through to
 * the contract's 404).
 */
function bySpecificity(a: CompiledRoute, b: CompiledRoute): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const difference = RANK[a.segments[i]!.kind] - RANK[b.segments[i]!.kind];
    if (difference !== 0) return difference;
  }
  return b.segments.length - a.segments.length;
}

const compiled = Object.entries(API_ROUTES)
  .map(([pattern, module]) => compile(pattern, module))
  .sort(bySpecificity);

export type RouteMatch = { pattern: string; module: RouteModule; params: Record<string, string> };

/**
 * The route for a path's segments: `raw` as sent (static segments compare as sent, as Next.js
 * compares them) and `decoded` (what params hold). Null when no route file serves the path.
 */
export function matchRoute(raw: string[], decoded: string[]): RouteMatch | null {
  for (const route of compiled) {
    const params = matchSegments(route.segments, raw, decoded);
    if (params) return { pattern: route.pattern, module: route.module, params };
  }
  return null;
}

function matchSegments(
  segments: Segment[],
  raw: string[],
  decoded: string[],
): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (i >= raw.length) return null;
    if (segment.kind === "static") {
      if (raw[i] !== segment.text) return null;
    } else if (segment.kind === "param") {
      params[segment.name] = decoded[i]!;
    } else {
      // Next.js hands a catch-all its segments as an array; the one catch-all here ignores them.
      params[segment.name] = decoded.slice(i).join("/");
      return params;
    }
  }
  return raw.length === segments.length ? params : null;
}
