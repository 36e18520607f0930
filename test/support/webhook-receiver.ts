import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

// A local webhook receiver on 127.0.0.1 that records every request and answers with the status
// `answer` chooses (200 unless told otherwise). Tests must close it: `afterAll(() => receiver.close())`.

export type ReceivedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  answeredWith: number;
};

export type WebhookReceiver = {
  url: string;
  port: number;
  received: ReceivedRequest[];
  close: () => Promise<void>;
};

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

export async function startWebhookReceiver(
  options: { port?: number; answer?: (request: ReceivedRequest, index: number) => number } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: flatten(req.headers),
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
        answeredWith: 200,
      };
      request.answeredWith = options.answer?.(request, received.length) ?? 200;
      received.push(request);
      res.writeHead(request.answeredWith, { "content-type": "text/plain" });
      res.end(request.answeredWith < 300 ? "ok" : "not now");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
