import { CLIENT_ADDRESS_HEADER } from "@/lib/auth/client-address";
import { markHostedCall, type HostedGatewayRef } from "./hosted-call-marker";

// How a hosted gateway's gate (the countersign-mcp-gateway package's CountersignGate, over
// @countersign/sdk) reaches Countersign: in-process, through the same route handlers an agent's
// HTTP request reaches (lib/http/api-routes.ts), with the agent's own key. So every gated call is
// exactly the call that agent would make — the same validation, authorization, policies, events
// and contract — with no second gate to keep in step with the bin's. In-process rather than over
// loopback HTTP: the server need not know an address at which it can reach itself (it may listen
// on one interface only, behind TLS or a proxy), and no socket or request parsing is spent on a
// call that never leaves the process.

/** The SDK's base URL for in-process calls: never resolved, only routed. */
export const OWN_API_BASE = "http://countersign.in-process";

/** `hosted`: the gateway whose gate calls (its calls are keyed by its id: hosted-call-marker.ts). */
export function ownApiFetch(clientAddress: string | null, hosted?: HostedGatewayRef) {
  return async (input: string, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (hosted) markHostedCall(request, hosted);
    // the agent's address for the rate limits, as the server stamped it on the agent's request
    if (clientAddress) request.headers.set(CLIENT_ADDRESS_HEADER, clientAddress);
    else request.headers.delete(CLIENT_ADDRESS_HEADER);
    const url = new URL(request.url);
    const raw = url.pathname.slice(1).split("/");
    const { matchRoute } = await import("@/lib/http/api-routes");
    const match = matchRoute(raw, raw.map(decodeURIComponent));
    const method = request.method as "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
    const handler = match?.module[method];
    if (!match || !handler)
      return Response.json(
        { error: { code: "not_found", message: "Endpoint not found." } },
        { status: 404 },
      );
    return handler(request, { params: Promise.resolve(match.params) });
  };
}
