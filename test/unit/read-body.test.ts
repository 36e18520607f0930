import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { once } from "node:events";
import { connect } from "node:net";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readBodyFrom, readJsonBody } from "@/lib/http/read-body";
import { toResponse } from "@/lib/errors";
import { log } from "@/lib/log/logger";

// readJsonBody over a body the production server leaves in Node's request (lib/http/node-api.ts
// hands handlers a web Request without a body and marks it with readBodyFrom): the same answers
// as over a web stream — the bytes however they arrive, 413 past the limit with the connection
// kept, a dropped connection past 16 × the limit, a client that leaves mid-body.

const LIMIT = 1024;
let server: Server;
let port: number;
const outcomes: string[] = [];
const answers: number[] = [];
const errorsLogged = vi.spyOn(log(), "error");

beforeAll(async () => {
  process.env.MAX_BODY_BYTES = String(LIMIT);
  server = createServer((incoming, response) => {
    const headers = Object.entries(incoming.headers).map(([k, v]): [string, string] => [
      k,
      String(v),
    ]);
    // `/web`: the body as a web stream over Node's request, as the production server passed it
    // before (and other callers of the API's handlers still do)
    const request =
      incoming.url === "/web"
        ? new Request("http://localhost/web", {
            method: incoming.method,
            headers,
            body: webStreamOf(incoming),
            duplex: "half",
          } as RequestInit)
        : new Request(`http://localhost${incoming.url}`, { method: incoming.method, headers });
    if (incoming.url !== "/web") readBodyFrom(request, incoming);
    readJsonBody(request).then(
      (body) => {
        outcomes.push("read");
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ body: body ?? null }));
      },
      async (error: Error) => {
        outcomes.push(`failed: ${error.message}`);
        const answer = toResponse(error);
        answers.push(answer.status);
        if (response.destroyed) return;
        response.writeHead(answer.status, { "content-type": "application/json" });
        response.end(await answer.text());
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  delete process.env.MAX_BODY_BYTES;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The web stream lib/http/node-api.ts made of a request's body before it left the body in Node's. */
function webStreamOf(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  const chunks = incoming[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      },
      cancel: () => void incoming.destroy(),
    },
    { highWaterMark: 0 },
  );
}

/** Sends `parts` one write at a time (chunked: no Content-Length) and reads the answer. */
function post(path: string, parts: Buffer[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path,
        headers: { "content-type": "application/json" },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            body: JSON.parse(text),
          }),
        );
      },
    );
    sent.on("error", reject);
    (async () => {
      for (const part of parts) {
        sent.write(part);
        await new Promise((r) => setTimeout(r, 5));
      }
      sent.end();
    })();
  });
}

describe.each(["/node", "/web"])("readJsonBody, body read by path %s", (path) => {
  it("assembles a body sent in many writes, a character split between two of them", async () => {
    const text = JSON.stringify({ note: "déjà vu € 😀", n: 1 });
    const bytes = Buffer.from(text);
    const emoji = bytes.indexOf(Buffer.from("😀"));
    const parts = [bytes.subarray(0, 5), bytes.subarray(5, emoji + 2), bytes.subarray(emoji + 2)];
    const answer = await post(path, parts);
    expect(answer.status).toBe(200);
    expect(answer.body.body).toEqual({ note: "déjà vu € 😀", n: 1 });
  });

  it("takes an empty body as no body", async () => {
    const answer = await post(path, []);
    expect(answer).toMatchObject({ status: 200, body: { body: null } });
  });

  it("answers 413 past the limit and keeps the connection for the next request", async () => {
    const socket = connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    try {
      for (let round = 1; round <= 3; round++) {
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
            chunked("x".repeat(LIMIT / 2)) +
            chunked("x".repeat(LIMIT)) +
            chunked("x".repeat(LIMIT)) +
            "0\r\n\r\n",
        );
        const ok = '{"ok":true}';
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${ok.length}\r\n\r\n${ok}`,
        );
        await expect.poll(() => received.split("HTTP/1.1 ").length - 1).toBe(2 * round);
      }
      const statuses = received.match(/HTTP\/1\.1 (\d+)/g);
      expect(statuses).toEqual(Array(3).fill(["HTTP/1.1 413", "HTTP/1.1 200"]).flat());
      expect(received).toContain("payload_too_large");
      expect(received).toContain('{"body":{"ok":true}}');
      expect(socket.destroyed).toBe(false);
    } finally {
      socket.destroy();
    }
  });

  it("drops the connection of a client that goes on sending past 16 × the limit", async () => {
    const socket = connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.on("error", () => undefined);
    const closed = new Promise((resolve) => socket.once("close", resolve));
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = "x".repeat(LIMIT);
    let sent = 0;
    while (!socket.destroyed && sent < 64 * LIMIT) {
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      sent += chunk.length;
      await new Promise((r) => setTimeout(r, 1));
    }
    await closed;
    expect(received).toContain("413");
    expect(sent).toBeLessThan(64 * LIMIT);
  });

  it("fails the read of a client that leaves mid-body, and serves the next", async () => {
    const before = outcomes.length;
    const socket = connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
    );
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await expect.poll(() => outcomes.length).toBe(before + 1);
    expect(outcomes.at(-1)).toMatch(/^failed: The connection closed before the request body/);
    // the client's doing, answered (to nobody) as a 400, never logged as the server's error
    expect(answers.at(-1)).toBe(400);
    expect(errorsLogged).not.toHaveBeenCalled();
    expect(await post(path, [Buffer.from("{}")])).toMatchObject({
      status: 200,
      body: { body: {} },
    });
  });
});

describe("readJsonBody of a body left in Node's request, read again", () => {
  const jsonRequest = () =>
    new Request("http://localhost/again", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });

  it("fails a second read at once, as a web body's second read fails", async () => {
    const source = new PassThrough();
    const request = jsonRequest();
    readBodyFrom(request, source as unknown as IncomingMessage);
    source.end('{"a":1}');
    expect(await readJsonBody(request)).toEqual({ a: 1 });
    await expect(readJsonBody(request)).rejects.toThrow(/already been read/);
  });

  it("fails at once when something else read the body first (no wait for events that never come)", async () => {
    const source = new PassThrough();
    source.end('{"a":1}');
    source.resume();
    await once(source, "end");
    const request = jsonRequest();
    readBodyFrom(request, source as unknown as IncomingMessage);
    await expect(readJsonBody(request)).rejects.toThrow(/already been read/);
  });
});
