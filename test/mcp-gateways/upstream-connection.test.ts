import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GuardedUpstream, secretsOf } from "@/lib/mcp-gateways/guarded-upstream";
import { pinnedFetch } from "@/lib/mcp-gateways/upstream-target";

// A hosted gateway's connection to its upstream: only to the addresses checked when the session
// connected (a name that rebinds later is never asked again), only to the gateway's origin, no
// redirects followed; and nothing the upstream says carries the gateway's header values onward.

let server: Server;
let port: number;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.headers);
    if (request.url === "/moved")
      return void response.writeHead(302, { location: "http://169.254.169.254/" }).end();
    if (request.url === "/huge") {
      // 6 MiB of one JSON answer, or of one event that never ends
      const sse = request.headers.accept === "text/event-stream";
      response.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
      if (sse) response.write("event: message\ndata: ok\n\n".repeat(50_000));
      const chunk = "x".repeat(64 * 1024);
      for (let i = 0; i < 96; i++) response.write(chunk);
      return void response.end();
    }
    if (request.url === "/events") {
      // many small events: 6 MiB in all, none big
      response.writeHead(200, { "content-type": "text/event-stream" });
      return void response.end(`data: ${"y".repeat(100)}\n\n`.repeat(60_000));
    }
    response.writeHead(200, { "content-type": "text/plain" }).end("upstream answer");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const checked = () => ({
  ok: true as const,
  // a name nobody resolves: the connection goes to the checked address, the name stays the Host
  url: new URL(`http://mcp.upstream.invalid:${port}/mcp`),
  address: "127.0.0.1",
  family: 4 as const,
  addresses: [{ address: "127.0.0.1", family: 4 as const }],
});

describe("pinnedFetch", () => {
  it("refuses an answer, or one event of a stream, over 4 MiB (L5: the server's memory)", async () => {
    const fetchUpstream = pinnedFetch(checked());
    try {
      for (const accept of ["application/json", "text/event-stream"]) {
        const response = await fetchUpstream(`http://mcp.upstream.invalid:${port}/huge`, {
          headers: { accept },
        });
        await expect(response.text()).rejects.toThrow(/over 4 MiB/);
      }
      // a long stream of small events is not cut
      const events = await fetchUpstream(`http://mcp.upstream.invalid:${port}/events`);
      expect((await events.text()).length).toBeGreaterThan(6_000_000);
    } finally {
      fetchUpstream.close();
    }
  });

  it("connects to the checked address, keeping the name as the Host", async () => {
    const fetchUpstream = pinnedFetch(checked());
    try {
      const response = await fetchUpstream(`http://mcp.upstream.invalid:${port}/mcp`, {
        method: "POST",
        headers: { authorization: "Bearer up-123456789", "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("upstream answer");
      expect(seen.at(-1)).toMatchObject({
        host: `mcp.upstream.invalid:${port}`,
        authorization: "Bearer up-123456789",
      });
    } finally {
      fetchUpstream.close();
    }
  });

  it("does not follow a redirect, and refuses any other origin", async () => {
    const fetchUpstream = pinnedFetch(checked());
    try {
      const moved = await fetchUpstream(`http://mcp.upstream.invalid:${port}/moved`);
      expect(moved.status).toBe(302);
      const requests = seen.length;
      await expect(fetchUpstream("http://169.254.169.254/latest/meta-data")).rejects.toThrow(
        /not the gateway's upstream/,
      );
      expect(seen.length).toBe(requests);
    } finally {
      fetchUpstream.close();
    }
  });
});

describe("GuardedUpstream", () => {
  const secrets = secretsOf({ Authorization: "Bearer sk-live-0123456789", "X-Team": "42" });

  function inner(fail: string | null) {
    const transport: Transport = {
      start: async () => {},
      close: async () => {},
      send: async (message) => {
        if (fail) throw new Error(fail);
        // the upstream answers, quoting the token
        transport.onmessage?.({
          jsonrpc: "2.0",
          id: (message as { id: number }).id,
          result: { content: [{ type: "text", text: "you sent sk-live-0123456789" }] },
        });
      },
    };
    return transport;
  }

  it("answers a request the upstream refused as that request's error, scrubbed", async () => {
    const upstream = new GuardedUpstream(
      inner("Error POSTing to endpoint (HTTP 401): bad token Bearer sk-live-0123456789"),
      secrets,
    );
    const received: JSONRPCMessage[] = [];
    upstream.onmessage = (message) => received.push(message);
    await upstream.start();
    await upstream.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    expect(received).toHaveLength(1);
    const text = JSON.stringify(received[0]);
    expect(text).toContain('"id":1');
    expect(text).toContain("bad token [redacted]");
    expect(text).not.toContain("sk-live");
  });

  it("scrubs the header values from what the upstream sends, and leaves short values alone", async () => {
    const upstream = new GuardedUpstream(inner(null), secrets);
    const received: JSONRPCMessage[] = [];
    upstream.onmessage = (message) => received.push(message);
    await upstream.start();
    await upstream.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: {} });
    expect(JSON.stringify(received[0])).toContain("you sent [redacted]");
    expect(secrets).not.toContain("42");
  });
});
