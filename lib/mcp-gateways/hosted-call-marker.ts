// Which hosted gateway a gated call comes from, known only inside this process. The hosted
// gate reaches POST /runs/{id}/gated-calls in-process (own-api-fetch.ts) with the agent's own key,
// so the request itself cannot say "hosted": anything in it (a body field, a header) an agent could
// also send from outside, and then write a card (its summary, description, annotations) that the
// hosted gateway would later pick up and run with the team's credential. The mark is the Request
// object itself, held here: no client can forge it. One table per process (lib/http/server.ts
// loads lib/ twice).

export type HostedGatewayRef = { id: string; name: string };

/** The pick-up key of a hosted gateway's calls: an agent-supplied gateway name never has it. */
export const HOSTED_GATEWAY_PREFIX = "hosted:";

const marks = ((
  globalThis as { __countersignHostedCallMarks?: WeakMap<Request, HostedGatewayRef> }
).__countersignHostedCallMarks ??= new WeakMap());

export function markHostedCall(request: Request, gateway: HostedGatewayRef): void {
  marks.set(request, gateway);
}

/** The hosted gateway that sent this in-process request, or null (any request from outside). */
export function hostedGatewayOf(request: Request): HostedGatewayRef | null {
  return marks.get(request) ?? null;
}
