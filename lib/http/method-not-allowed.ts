import { MethodNotAllowedError, toResponse } from "@/lib/errors";

// Next.js answers a method that a route file does not export with a bare 405: no body, no
// `Allow`, so a client cannot tell a typo'd method from a broken server. Each route file
// exports these refusals for the methods it does not serve, e.g.
//   export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
// The return type names only the methods left over, so destructuring one the route serves
// is a type error rather than a silent override.

type Served = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Refused<S extends Served> =
  | Exclude<Served, S>
  | "OPTIONS"
  // Next.js answers HEAD with the GET handler when there is one.
  | ("GET" extends S ? never : "HEAD");
type RouteHandler = (request: Request) => Response;

export function refuseOtherMethods<const S extends Served>(
  ...served: S[]
): Record<Refused<S>, RouteHandler> {
  const allow = [...served, ...(served.includes("GET" as S) ? ["HEAD"] : []), "OPTIONS"];
  const refuse: RouteHandler = (request) =>
    toResponse(new MethodNotAllowedError(request.method, allow));
  // Next.js's own OPTIONS would list the refusals below as if they were served.
  const options: RouteHandler = () =>
    new Response(null, { status: 204, headers: { allow: allow.join(", ") } });
  const handlers: Record<string, RouteHandler> = { OPTIONS: options };
  for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    if (!allow.includes(method)) handlers[method] = refuse;
  return handlers as Record<Refused<S>, RouteHandler>;
}
