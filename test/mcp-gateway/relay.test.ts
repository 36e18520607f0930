import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { ToolGate } from "@/lib/mcp-gateway/countersign-gate";
import { Relay } from "@/lib/mcp-gateway/relay";

// The relay over in-memory transports: what of the client's messages reaches the upstream.

async function harness() {
  const [client, downstream] = InMemoryTransport.createLinkedPair();
  const [upstream, server] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  server.onmessage = (message) => received.push(message);
  await server.start();
  const gated: string[] = [];
  const gate: ToolGate = {
    call: async (call) => {
      gated.push(call.toolName);
      return { isError: true, content: [{ type: "text", text: "refused" }] };
    },
    close: async () => {},
  };
  const relay = new Relay(downstream, upstream, gate, {
    upstreamTimeoutMs: 1_000,
    log: () => {},
  });
  await relay.start();
  await client.start();
  return { client, received, gated };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("Relay", () => {
  it("drops a client notification that is not notifications/* (a tools/call without an id never reaches the upstream)", async () => {
    const { client, received, gated } = await harness();
    await client.send({
      jsonrpc: "2.0",
      method: "tools/call",
      params: { name: "delete_everything", arguments: {} },
    } as JSONRPCMessage);
    await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await settle();
    expect(received.map((m) => (m as { method?: string }).method)).toEqual([
      "notifications/initialized",
    ]);
    expect(gated).toEqual([]);
  });
});
