import { NotFoundError, toResponse } from "@/lib/errors";
import { matchRoute, type HttpMethod } from "@/lib/http/api-routes";
import { handlerFor } from "@/lib/http/node-api";

// Every endpoint under /api/v1 for Next.js (`next dev`; under `npm start` the production server
// dispatches from the same table itself: lib/http/node-api.ts). The table and why one catch-all:
// app/api/v1/routes.ts. Unknown paths answer the contract's 404.
export const dynamic = "force-dynamic";

async function serve(request: Request): Promise<Response> {
  const raw = new URL(request.url).pathname.slice(1).split("/");
  let decoded: string[];
  try {
    decoded = raw.map(decodeURIComponent);
  } catch {
    return toResponse(new NotFoundError("Endpoint"));
  }
  // Always a match: the table's own catch-all takes what no endpoint does.
  const match = matchRoute(raw, decoded)!;
  const handler = handlerFor(match.module, request.method as HttpMethod);
  return handler(request, { params: Promise.resolve(match.params) });
}

export const GET = serve;
export const HEAD = serve;
export const POST = serve;
export const PUT = serve;
export const PATCH = serve;
export const DELETE = serve;
export const OPTIONS = serve;
