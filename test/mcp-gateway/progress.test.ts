import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolGate } from "@/lib/mcp-gateway/countersign-gate";
import { Relay } from "@/lib/mcp-gateway/relay";
import { createConformanceFixtures } from "@/test/mcp-gateway/conformance-fixtures";

// Issue 25, item 4: while a gated call waits, the gateway sends its own progress (1, 2, …); when
// the approved call is forwarded, the upstream's progress for the same token (here 0, 50, 100 of
// 100) follows. MCP requires progress to increase with each notification, so the upstream's is
// renumbered above the waiting phase's last value, its total moved along. The official MCP client
// SDK, over in-memory transports, is the MCP client; the conformance fixtures are the upstream.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The relay between the SDK client and the fixtures, behind a gate that waits `statuses` first. */
async function throughRelay(statuses: string[]) {
  const [clientSide, downstream] = InMemoryTransport.createLinkedPair();
  const [upstream, serverSide] = InMemoryTransport.createLinkedPair();
  const fixtures = createConformanceFixtures();
  await fixtures.server.connect(serverSide);
  const gate: ToolGate = {
    call: async (call, forward) => {
      for (const status of statuses) {
        call.onStatus(status);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return forward(call.args);
    },
    close: async () => {},
  };
  const relay = new Relay(downstream, upstream, gate, { upstreamTimeoutMs: 5_000, log: () => {} });
  await relay.start();
  const client = new Client({ name: "progress-test", version: "1.0.0" });
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    fixtures.cleanup();
  });
  return client;
}

async function progressOf(client: Client) {
  const seen: Progress[] = [];
  const result = (await client.callTool(
    { name: "test_tool_with_progress", arguments: {} },
    undefined,
    { onprogress: (progress) => seen.push(progress) },
  )) as CallToolResult;
  expect(result.isError).toBeFalsy();
  // the last upstream notification may arrive with the result (in-memory: same turn)
  await new Promise((resolve) => setTimeout(resolve, 50));
  return seen;
}

describe("progress through the gateway", () => {
  it("keeps increasing when the approved call's own progress follows the waiting phase's", async () => {
    const client = await throughRelay(["Waiting for approval in queue 'ops'", "Approved by Dana"]);
    const seen = await progressOf(client);
    const values = seen.map((p) => p.progress);
    expect(values.slice(0, 2)).toEqual([1, 2]); // the gateway's, while waiting
    expect(seen[0]!.message).toContain("Waiting for approval");
    expect(values).toHaveLength(5);
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeGreaterThan(values[i - 1]!);
    // the upstream's 0, 50, 100 of 100: after 2, its spacing kept and its total moved along
    expect(seen.slice(2).map((p) => [p.progress, p.total])).toEqual([
      [3, 103],
      [53, 103],
      [103, 103],
    ]);
  });

  it("leaves the upstream's progress as it is when the call did not wait", async () => {
    const client = await throughRelay([]);
    const seen = await progressOf(client);
    expect(seen.map((p) => [p.progress, p.total])).toEqual([
      [0, 100],
      [50, 100],
      [100, 100],
    ]);
  });
});
