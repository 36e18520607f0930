import { requireAgent, requireReviewer } from "@/lib/auth/actor";
import { requireSignedIn } from "@/lib/auth/require-session";
import type { AnyEndpoint, Method } from "@/lib/contract/endpoint";
import { API_ENDPOINTS } from "@/lib/contract/openapi";
import { NotFoundError, toResponse } from "@/lib/errors";
import { apiRoute } from "@/lib/http/api-route";
import type { RouteContext, RouteModule } from "@/lib/http/api-routes";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { queryOf } from "@/lib/http/read-body";

// The API's routes, built once per process from the endpoints' definitions (lib/contract/endpoint.ts):
// per path, a handler for each method it serves (wrapped by lib/http/api-route.ts: body, caller,
// errors) and the contract's 405 for the others. Both servers dispatch from this table: Next.js
// through the one catch-all route file beside it ([...path]/route.ts, `next dev`), the production
// server straight from Node's http server (lib/http/api-routes.ts, lib/http/node-api.ts).
//
// A catch-all rather than a route file per endpoint: such a file would hold nothing but a pointer
// to its definition, and a pointer can point wrong or be missing (the production table and the
// file routes were kept in step by a test). With one table, `next dev` and `npm start` route every
// request by the same code (static segments before params: lib/http/api-routes.ts), and the path
// of an endpoint is written once, in its definition.

const ORDER: Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

type Handler = (request: Request, context: RouteContext) => Promise<Response>;

/** The endpoint's handler behind the edge: the caller's kind is checked here, as its definition
 * states it, before the handler runs (the verbs check it too, and check access). */
export function handlerOf(endpoint: AnyEndpoint): Handler {
  if (endpoint.auth === "none") {
    return async (request, context) =>
      endpoint.handler({ request, params: (await context.params) as never });
  }
  return apiRoute(async ({ request, params, body, actor, credential }) => {
    if (endpoint.auth === "session") requireSignedIn(credential, endpoint.signedIn);
    else if (endpoint.auth === "agent") requireAgent(actor);
    else if (endpoint.auth === "reviewer") requireReviewer(actor);
    return endpoint.handler({
      request,
      params: params as never,
      body,
      actor,
      credential,
      // read only by the handlers that take a query: parsing the URL costs a little
      get query() {
        return queryOf(request);
      },
    });
  });
}

function routeModule(path: string, endpoints: AnyEndpoint[]): RouteModule {
  const served = ORDER.filter((method) => endpoints.some((e) => e.method === method));
  const handlers: Record<string, Handler | ((request: Request) => Response)> = {
    ...refuseOtherMethods(...served),
  };
  for (const endpoint of endpoints) {
    if (endpoints.filter((e) => e.method === endpoint.method).length > 1)
      throw new Error(`${endpoint.method} ${path} is defined twice`);
    handlers[endpoint.method] = handlerOf(endpoint);
  }
  return handlers as RouteModule;
}

/** `/runs/{runId}` → `/api/v1/runs/[runId]`, as Next.js spells a route's folder. */
const patternOf = (path: string) => `/api/v1${path.replace(/\{(\w+)\}/g, "[$1]")}`;

function routesOf(endpoints: readonly AnyEndpoint[]): Record<string, RouteModule> {
  const byPath = new Map<string, AnyEndpoint[]>();
  for (const endpoint of endpoints)
    byPath.set(endpoint.path, [...(byPath.get(endpoint.path) ?? []), endpoint]);
  return Object.fromEntries(
    [...byPath].map(([path, list]) => [patternOf(path), routeModule(path, list)]),
  );
}

// Anything under /api/v1 that is not an endpoint answers in the contract's error shape.
const notFound = async () => toResponse(new NotFoundError("Endpoint"));
const NOT_AN_ENDPOINT: RouteModule = {
  GET: notFound,
  POST: notFound,
  PUT: notFound,
  PATCH: notFound,
  DELETE: notFound,
};

/** Pattern (as Next.js spells a route's folder) → its handlers. */
export const API_V1_ROUTES: Readonly<Record<string, RouteModule>> = {
  ...routesOf(API_ENDPOINTS),
  "/api/v1/[...path]": NOT_AN_ENDPOINT,
};
