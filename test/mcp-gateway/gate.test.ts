import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { CallCancelled, CANCELLED, CountersignGate } from "@/lib/mcp-gateway/countersign-gate";

// CountersignGate against a fake Countersign (a fetch answering each path): what it forwards, and
// what it withdraws. test/mcp-gateway/gateway.test.ts drives the same gate against a real server.

type Answer = { decision: "allow" | "deny" | "ask"; pickedUp: boolean; args: object };

function harness(answer: Answer) {
  const sent: { method: string; path: string }[] = [];
  const bodies: Record<string, unknown>[] = [];
  const call = {
    id: "call-earlier",
    status: answer.decision === "allow" ? "approved" : "pending",
    toolName: "write_file",
    args: answer.args,
    revision: 1,
    decision: answer.decision === "allow" ? { outcome: "approve", by: null } : null,
  };
  const batch = {
    id: "batch-earlier",
    runId: "run-earlier",
    status: call.status,
    queue: { id: "q", name: "ops" },
    reviewUrl: "http://countersign.test/review/batch-earlier",
    calls: [call],
  };
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(input)).pathname.replace(/^\/api\/v1/, "");
    const method = init?.method ?? "GET";
    sent.push({ method, path });
    if (method === "POST" && path === "/runs") return json({ id: "run-1", status: "running" }, 201);
    if (method === "POST" && path === "/runs/run-1/gated-calls") {
      bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return json({ decision: answer.decision, callId: call.id, pickedUp: answer.pickedUp, batch });
    }
    if (method === "POST" && path.endsWith("/cancel"))
      return json({ ...batch, status: "cancelled" });
    // waiting for the decision: nothing comes until the wait is aborted
    return new Promise<Response>((_, reject) => {
      const signal = init?.signal;
      const stop = () => reject(signal?.reason ?? new DOMException("aborted", "AbortError"));
      if (signal?.aborted) stop();
      else signal?.addEventListener("abort", stop, { once: true });
    });
  };
  const gate = new CountersignGate(
    { baseUrl: "http://countersign.test", apiKey: "cs_agent_test", fetch },
    () => ({
      server: "filesystem",
      serverVersion: null,
      client: null,
      clientVersion: null,
      upstreamTransport: "stdio",
      upstreamId: "3f2a9c",
    }),
    { queue: null, timeoutSecs: null, answerWithinMs: 0 },
  );
  return { gate, sent, bodies };
}

const ok: CallToolResult = { content: [{ type: "text", text: "ran" }] };

function gated(args: Record<string, unknown>, signal = new AbortController().signal) {
  return { toolName: "write_file", args, tool: null, signal, progress: true, onStatus: () => {} };
}

describe("CountersignGate", () => {
  it("forwards Countersign's copy of the arguments; a key the server never recorded (__proto__) is refused", async () => {
    const { gate } = harness({ decision: "allow", pickedUp: false, args: { path: "a" } });
    // JSON.parse makes an own __proto__ key, as the MCP SDK's stdio reader does
    const sneaky = JSON.parse('{"path":"a","__proto__":{"mode":"0777"}}') as Record<
      string,
      unknown
    >;
    const forwarded: Record<string, unknown>[] = [];
    const result = await gate.call(gated(sneaky), async (args) => {
      forwarded.push(args);
      return ok;
    });
    expect(forwarded).toEqual([]);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/not forwarded|nothing ran/i);

    const plain = await gate.call(gated({ path: "a" }), async (args) => {
      forwarded.push(args);
      return ok;
    });
    expect(plain).toEqual(ok);
    expect(forwarded).toEqual([{ path: "a" }]);
    expect(Object.keys(forwarded[0]!)).toEqual(["path"]);
  });

  it("a cancelled call that picked up an earlier call's card leaves that card alone", async () => {
    const { gate, sent } = harness({ decision: "ask", pickedUp: true, args: { path: "a" } });
    const controller = new AbortController();
    const pending = gate.call(gated({ path: "a" }, controller.signal), async () => ok);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort(CANCELLED);
    await expect(pending).rejects.toBeInstanceOf(CallCancelled);
    expect(sent.filter((s) => s.path.endsWith("/cancel"))).toEqual([]);
  });

  it("a cancelled call withdraws its own card", async () => {
    const { gate, sent } = harness({ decision: "ask", pickedUp: false, args: { path: "a" } });
    const controller = new AbortController();
    const pending = gate.call(gated({ path: "a" }, controller.signal), async () => ok);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort(CANCELLED);
    await expect(pending).rejects.toBeInstanceOf(CallCancelled);
    expect(sent.filter((s) => s.path.endsWith("/cancel"))).toEqual([
      { method: "POST", path: "/batches/batch-earlier/cancel" },
    ]);
  });

  it("sends the upstream's fingerprint with each call (decisions are picked up in front of the same upstream only)", async () => {
    const { gate, bodies } = harness({ decision: "allow", pickedUp: false, args: { path: "a" } });
    await gate.call(gated({ path: "a" }), async () => ok);
    expect(bodies[0]).toMatchObject({ gateway: "filesystem", upstream: "3f2a9c" });
  });
});
