import { describe, expect, it } from "vitest";
import type { Batch, PolicyDecision } from "@/components/review-card/index";
import {
  callDecisionText,
  describeEvent,
  timelineContext,
} from "@/components/run-timeline/describe-event";
import type { BatchView, CallView } from "@/lib/read-models/batch-run-views";
import type { WireEvent } from "@/lib/events/wire";
import {
  byPolicy,
  decided,
  decision,
  makeBatch,
  makeCall,
  makePlanBatch,
  migrationPlan,
  scratchRule,
} from "./review-card-fixtures";

// What the run page says about each event: policy and memory decisions name their cause.

/** The card's wire batch as the run page's view (the fields the card may lack, filled in). */
const asView = (batch: Batch) => ({ escalations: 0, routing: null, ...batch }) as BatchView;

const writes = makeBatch({
  id: "batch-w",
  calls: [makeCall({ id: "call-w", batchId: "batch-w", toolName: "write_file" })],
});
const context = timelineContext([asView(writes), asView(makePlanBatch())]);

function event(type: string, data: Record<string, unknown>, callId = "call-w"): WireEvent {
  return {
    seq: 7,
    type,
    at: "2025-06-01T12:00:00.000Z",
    runId: "run-1",
    batchId: callId === "call-1" ? "batch-1" : writes.id,
    callId,
    queueId: "q-1",
    actor: { kind: "system", id: null, name: null },
    data,
  };
}

const line = (e: WireEvent) => {
  const described = describeEvent(e, context);
  return described.title.replace("{code}", described.code ?? "a call");
};

const policy = (p: Partial<PolicyDecision>) => byPolicy(p).policy;

describe("describeEvent: policy and memory decisions", () => {
  it("names the rule or the agent's mode", () => {
    const decidedBy = (outcome: string, p: Partial<PolicyDecision>, extra: object = {}) =>
      event("call.decided", { outcome, source: "policy", policy: policy(p), ...extra });
    expect(line(decidedBy("approved", {}))).toBe(
      "write_file approved by policy rule 'Scratch writes'",
    );
    expect(line(decidedBy("approved", { effect: "ask", rule: null, agentMode: "allow" }))).toBe(
      "write_file approved: the agent's mode is allow",
    );
    expect(line(decidedBy("approved", { rule: null, agentMode: "off" }))).toBe(
      "write_file approved: the agent's gate is off",
    );
    const denied = describeEvent(
      decidedBy(
        "rejected",
        { effect: "ask", rule: null, agentMode: "deny" },
        { reason: "Not approved: this agent's mode is deny." },
      ),
      context,
    );
    expect(denied).toMatchObject({
      title: "{code} rejected: the agent's mode is deny",
      code: "write_file",
      tone: "danger",
      reason: null,
      note: "The agent's mode rejects its calls that would need a reviewer.",
    });
  });

  it("keeps older policy events readable", () => {
    expect(line(event("call.decided", { outcome: "approved", source: "policy" }))).toBe(
      "write_file allowed by policy",
    );
  });

  it("says a remembered approval's scope", () => {
    expect(
      line(event("call.decided", { outcome: "approved", source: "memory", scope: "run" })),
    ).toBe("write_file approved (remembered for this run)");
    expect(
      line(event("call.decided", { outcome: "approved", source: "memory", scope: "conversation" })),
    ).toBe("write_file approved (remembered for this conversation)");
  });

  it("renders a blocked call, which no batch on the page holds, by the name in its event", () => {
    const blocked = describeEvent(
      event(
        "call.blocked",
        {
          outcome: "rejected",
          source: "policy",
          toolName: "drop_table",
          policy: policy({
            effect: "deny",
            blocked: true,
            rule: { ...scratchRule, name: "No prod writes" },
          }),
          reason:
            "Blocked by policy rule 'No prod writes': prod is frozen. Do not retry this call.",
        },
        "call-hidden",
      ),
      context,
    );
    expect(blocked).toMatchObject({
      icon: "ban",
      tone: "danger",
      title: "{code} blocked by policy rule 'No prod writes'",
      code: "drop_table",
      reason: "Blocked by policy rule 'No prod writes': prod is frozen. Do not retry this call.",
    });
  });

  it("words a plan's summary edit as prose", () => {
    const summary = "Migrate after the month-end close";
    const edited = describeEvent(
      event("call.edited", { revision: 2, editedArgs: { ...migrationPlan, summary } }, "call-1"),
      context,
    );
    expect(edited).toMatchObject({
      title: "Edited the plan's summary (revision 2)",
      reason: summary,
    });
    expect(edited.payload).toBeUndefined();
    expect(
      line(
        event("call.decided", { outcome: "approved", source: "reviewer", edited: true }, "call-1"),
      ),
    ).toBe("Approved the plan with an edited summary");
  });
});

describe("callDecisionText", () => {
  const settled = (d: Parameters<typeof decided>[1]) =>
    decided(makeBatch(), d).calls[0] as unknown as CallView;

  it("gives a policy decision's cause, and keeps the others' wording", () => {
    expect(callDecisionText(settled(byPolicy())).text).toBe(
      "Approved by policy rule 'Scratch writes'",
    );
    expect(
      callDecisionText(
        settled(
          byPolicy({ effect: "ask", rule: null, agentMode: "deny" }, { outcome: "rejected" }),
        ),
      ),
    ).toEqual({ text: "Rejected: the agent's mode is deny", tone: "danger" });
    expect(callDecisionText(settled(byPolicy({ rule: null, agentMode: "off" }))).text).toBe(
      "Approved: the agent's gate is off",
    );
    expect(callDecisionText(settled(decision({ source: "memory" }))).text).toBe(
      "Approved automatically (remembered from Dana)",
    );
  });
});

describe("describeEvent: webhooks given up on", () => {
  it("says where the webhook went, why it stopped, and that it will not be retried", () => {
    const failed = event(
      "webhook.failed",
      {
        url: "http://localhost:4000/hook",
        error: "refused: localhost is a loopback address",
        attempts: 1,
      },
      "",
    );
    const described = describeEvent(failed, context);
    expect(line(failed)).toBe("Webhook to http://localhost:4000/hook failed for good");
    expect(described.tone).toBe("danger");
    expect(described.note).toMatch(/loopback address\. Not retried/);
  });
});

describe("describeEvent: runs finished through MCP", () => {
  it("says the MCP client read the decision; a worker's completion reads as before", () => {
    const mcp = event("run.completed", {
      result: { via: "mcp", batchId: "batch-w", outcome: "approved", status: "decided" },
    });
    expect(line(mcp)).toBe("Run completed: its MCP client read the decision");
    expect(line(event("run.completed", { result: { refunded: 25 } }))).toBe("Run completed");
    expect(line(event("run.completed", {}))).toBe("Run completed");
  });
});

describe("describeEvent: an MCP gateway's use of a decision", () => {
  it("says whether the decision was this run's own or picked up from an earlier session", () => {
    const own = event("call.used", {
      toolName: "write_file",
      outcome: "approved",
      status: "approved",
      fromRunId: "run-1",
    });
    expect(line(own)).toBe("The MCP gateway took the decision on write_file");
    expect(describeEvent(own, context).note).toBeNull();
    const earlier = event("call.used", {
      toolName: "write_file",
      outcome: "rejected",
      status: "rejected",
      fromRunId: "run-0",
    });
    expect(line(earlier)).toBe("Used the refusal of an earlier write_file call");
    expect(describeEvent(earlier, context).tone).toBe("danger");
  });
});
