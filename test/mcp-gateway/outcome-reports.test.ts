import { Countersign } from "@countersign/sdk";
import { describe, expect, it } from "vitest";
import { LINGER_MS, OutcomeReports, type Outcome } from "@/lib/mcp-gateway/outcome-reports";

// The gateway's outcome reports go after the client's answer: a report that fails transiently
// stays queued and is sent again, one refused for good is dropped, one that rode along with a
// call the server refused goes alone afterwards. A fake fetch stands in for Countersign here
// (test/mcp-gateway/gateway.test.ts and restart.test.ts send them to a real server).

type Sent = { path: string; body: { outcomes: Outcome[] } };

function harness(answers: number[]) {
  const sent: Sent[] = [];
  const client = new Countersign({
    baseUrl: "http://countersign.test",
    apiKey: "cs_agent_test",
    retry: false,
    fetch: async (input, init) => {
      sent.push({ path: new URL(input).pathname, body: JSON.parse(String(init?.body)) });
      const status = answers.shift() ?? 201;
      if (status === 0) throw new TypeError("fetch failed");
      const body =
        status < 300
          ? { recorded: [], alreadyReported: [] }
          : { error: { code: status === 409 ? "not_ready" : "internal", message: "no" } };
      return new Response(JSON.stringify(body), {
        status,
        headers: { "content-type": "application/json" },
      });
    },
  });
  const warnings: string[] = [];
  const reports = new OutcomeReports(
    client,
    async () => "run-1",
    (line) => warnings.push(line),
  );
  return { reports, sent, warnings };
}

const outcome = (callId: string): Outcome => ({
  callId,
  type: "tool.completed",
  result: { text: "ok" },
});

describe("OutcomeReports", () => {
  it("sends queued reports together after the linger, to the run's outcomes endpoint", async () => {
    const { reports, sent } = harness([]);
    reports.add(outcome("a"));
    reports.add(outcome("b"));
    expect(sent).toHaveLength(0); // not on the client's critical path
    expect(await reports.flush(2_000)).toBe(0);
    expect(sent).toEqual([
      {
        path: "/api/v1/runs/run-1/gated-calls/outcomes",
        body: { outcomes: [outcome("a"), outcome("b")] },
      },
    ]);
  });

  it("keeps a report that failed transiently (unreachable, 503) and sends it again: nothing lost", async () => {
    const { reports, sent, warnings } = harness([0, 503, 201]);
    reports.add(outcome("a"));
    await new Promise((resolve) => setTimeout(resolve, LINGER_MS + 50));
    expect(await reports.flush(5_000)).toBe(0);
    expect(sent.map((s) => s.body.outcomes.map((o) => o.callId))).toEqual([["a"], ["a"], ["a"]]);
    expect(warnings[0]).toMatch(/retrying/);
  });

  it("drops a report refused for good (409), saying so", async () => {
    const { reports, sent, warnings } = harness([409]);
    reports.add(outcome("a"));
    expect(await reports.flush(2_000)).toBe(0);
    expect(sent).toHaveLength(1);
    expect(warnings[0]).toMatch(/refused/);
  });

  it("rides along with a call: taken reports the server took are done, the others come back", async () => {
    const { reports, sent } = harness([]);
    reports.add(outcome("a"));
    reports.add(outcome("b"));
    const riding = reports.take();
    expect(riding.map((o) => o.callId)).toEqual(["a", "b"]);
    expect(reports.pending).toBe(0);
    reports.settle(riding, ["a"]);
    expect(reports.pending).toBe(1);
    // a call that failed puts its riders back, to go alone from then on
    const again = reports.take();
    reports.settle(again, null);
    expect(reports.take()).toEqual([]);
    expect(await reports.flush(2_000)).toBe(0);
    expect(sent.map((s) => s.body.outcomes.map((o) => o.callId))).toEqual([["b"]]);
  });
});
