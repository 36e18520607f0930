import type { FetchLike } from "@countersign/sdk";
import http from "node:http";
import https from "node:https";

// The per-call requests (record, use, report) are on every governed call's path: `fetch` (undici,
// web streams) costs the gateway about as much CPU as the rest of its work on a call. This is a
// fetch for those small JSON requests over node:http with kept-alive connections, reading the
// whole answer before resolving. Not for streams: the waits for a decision use the SDK's own
// fetch (they read a live event stream).

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 32 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 32 }),
};

export const keepAliveFetch: FetchLike = (input, init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return reject(new TypeError(`unsupported protocol ${url.protocol}`));
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return reject(signal.reason);
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: init.method ?? "GET",
        headers: init.headers as Record<string, string> | undefined,
        agent: agents[url.protocol],
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          signal?.removeEventListener("abort", abort);
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined)
              for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
          const status = response.statusCode ?? 500;
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, statusText: response.statusMessage, headers }));
        });
      },
    );
    const abort = () =>
      request.destroy(signal?.reason instanceof Error ? signal.reason : undefined);
    signal?.addEventListener("abort", abort, { once: true });
    request.on("error", (error) => {
      signal?.removeEventListener("abort", abort);
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    });
    request.end(typeof init.body === "string" ? init.body : undefined);
  });
