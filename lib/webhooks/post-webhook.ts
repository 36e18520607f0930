import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { CheckedTarget } from "./callback-target";

// The webhook POST itself, over node:http(s) rather than fetch: fetch resolves the name again
// when it connects, and a name that answered a public address to the check could answer
// 127.0.0.1 to the connection (DNS rebinding). Here the socket's lookup answers only the addresses
// that were checked, while the Host header and TLS (SNI and the certificate check) keep the name.
// Redirects are never followed: a 3xx is an answer like any other non-2xx.

export type WebhookAnswer = { status: number };

export function postWebhook(
  target: CheckedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<WebhookAnswer> {
  const { url, address, family, addresses } = target;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    // net asks for every address when it may try several (autoSelectFamily): all were checked.
    if (options.all) callback(null, addresses);
    else callback(null, address, family);
  };
  const options: RequestOptions = {
    method: "POST",
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
    lookup: pinned,
    agent: false, // no pooled socket to some other address
    signal: AbortSignal.timeout(timeoutMs),
  };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(options, (response) => {
      response.resume(); // the body is not needed; read it so the socket closes
      resolve({ status: response.statusCode ?? 0 });
    });
    request.on("error", reject);
    request.end(body);
  });
}
