import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Command, MemorySaver } from "@langchain/langgraph";
import { AIMessage, createAgent, fakeModel, humanInTheLoopMiddleware, tool } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  decisionsFrom,
  DecisionNotAllowedError,
  invokeWithApproval,
  requestDecisions,
  toolCallIdsFor,
  type PendingAction,
} from "@/lib/sdk/adapters/langgraph";
import { main } from "@/lib/sdk/examples/langgraph";
import { Countersign } from "@/lib/sdk/index";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import { decide, eventsOf, pendingBatch } from "@/test/sdk/fixtures";

// LangChain's human-in-the-loop middleware, with the real library and a scripted model: its
// interrupts become Countersign batches, and a reviewer's decision over the API becomes the
// agent's resume decision. The example (lib/sdk/examples/langgraph.ts) runs end to end.

let server: TestServer;
let reviewer: ApiClient;
let team: Awaited<ReturnType<typeof makeTeam>>;
const quiet = () => {};

beforeAll(async () => {
  server = await startApiServer("adapters-langgraph");
  team = await makeTeam();
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
}, 60_000);
afterAll(() => server?.stop());

const PROPOSED = "# Notes\n\n- Standup: ship the LangGraph adapter.\n";

/** Runs the example and returns it with the pending write_file batch the reviewer sees. */
async function startExample() {
  const running = main({ baseUrl: server.baseUrl, apiKey: team.agent.key, log: quiet });
  running.catch(() => {}); // awaited by the test; this keeps a failure from going unhandled first
  const batch = await pendingBatch(reviewer, team.queue.id, (b) =>
    b.calls.some((c: any) => c.toolName === "write_file"),
  );
  return { running, batch, call: batch.calls[0] };
}

describe("the LangGraph example", () => {
  it("asks before writing, and writes once after an approval", async () => {
    const { running, batch, call } = await startExample();
    // read_file is not interrupted: only the write reaches the card, under LangGraph's own id.
    expect(batch.calls).toHaveLength(1);
    expect(call).toMatchObject({
      toolName: "write_file",
      args: { path: "notes.md", content: PROPOSED },
      toolCallId: expect.stringMatching(/^fake_tc_/),
      summary: `Replace notes.md (${PROPOSED.length} characters)`,
      inputSchema: { type: "object", required: ["path", "content"] },
      metadata: { langgraph: { allowedDecisions: ["approve", "edit", "reject"] } },
    });
    await decide(reviewer, call, "approve");

    const result = await running;
    expect(result.toolRuns).toEqual([
      { name: "read_file", args: { path: "notes.md" } },
      { name: "write_file", args: { path: "notes.md", content: PROPOSED } },
    ]);
    expect(await readFile(join(result.workspace, "notes.md"), "utf8")).toBe(PROPOSED);
    expect(result.answer).toBe(`Done. Wrote ${PROPOSED.length} characters to notes.md.`);

    const run = await new Countersign({ baseUrl: server.baseUrl, apiKey: team.agent.key }).getRun(
      result.runId!,
    );
    expect(run).toMatchObject({
      status: "completed",
      conversationId: expect.stringMatching(/^notes-/),
    });
    const [completed] = await eventsOf(run.id, "tool.completed");
    expect(completed!.data).toMatchObject({
      toolCallId: call.toolCallId,
      result: `Wrote ${PROPOSED.length} characters to notes.md.`,
    });
  });

  it("runs the reviewer's edited args, checked against the tool's schema", async () => {
    const { running, call } = await startExample();
    const invalid = await reviewer.post(`/calls/${call.id}/decision`, {
      outcome: "edit",
      expectedRevision: call.revision,
      editedArgs: { path: "notes.md", content: 42 },
    });
    expect(invalid.status).toBe(400);

    const edited = { path: "notes.md", content: "# Notes\n\n- Standup: adapter shipped.\n" };
    await decide(reviewer, call, "edit", { editedArgs: edited, reason: "Past tense." });
    const result = await running;
    expect(result.toolRuns.filter((r) => r.name === "write_file")).toEqual([
      { name: "write_file", args: edited },
    ]);
    expect(await readFile(join(result.workspace, "notes.md"), "utf8")).toBe(edited.content);
  });

  it("does not write after a rejection, and the model reads the reviewer's reason", async () => {
    const { running, call } = await startExample();
    await decide(reviewer, call, "reject", { reason: "The notes are frozen this week." });
    const result = await running;

    const message = `The reviewer, ${team.reviewer.name}, rejected this call: The notes are frozen this week. The tool was not run.`;
    expect(result.toolRuns.map((r) => r.name)).toEqual(["read_file"]);
    expect(await readFile(join(result.workspace, "notes.md"), "utf8")).toBe("# Notes\n");
    expect(result.modelSaw).toContain(message);
    expect(result.answer).toBe(`I did not change notes.md. ${message}`);
    expect(await eventsOf(result.runId!, "tool.completed")).toEqual([]);
  });
});

/** An agent whose model asks to email `recipients` in one step, then answers; `sent` records emails. */
function emailAgent(recipients: string[]) {
  const sent: string[] = [];
  const sendEmail = tool(
    async ({ to }) => {
      sent.push(to);
      return `Sent to ${to}`;
    },
    { name: "send_email", description: "Send", schema: z.object({ to: z.string() }) },
  );
  const agent = createAgent({
    model: fakeModel()
      .respondWithTools(
        recipients.map((to) => ({ name: "send_email", args: { to }, id: `call-${to}` })),
      )
      .respond(new AIMessage("Understood.")),
    tools: [sendEmail],
    middleware: [humanInTheLoopMiddleware({ interruptOn: { send_email: true } })],
    checkpointer: new MemorySaver(),
  });
  return { agent, sent };
}

const emailBatch = () =>
  pendingBatch(reviewer, team.queue.id, (b) =>
    b.calls.some((c: any) => c.toolName === "send_email"),
  );

describe("requestDecisions", () => {
  it("answers one interrupt with the resume decisions, for a loop of your own", async () => {
    const { agent, sent } = emailAgent(["cy"]);
    const client = new Countersign({ baseUrl: server.baseUrl, apiKey: team.agent.key });
    const session = await client.startRun();
    const config = { configurable: { thread_id: "own-loop" } };
    const paused = await agent.invoke(
      { messages: [{ role: "user", content: "Email Cy." }] },
      config,
    );

    const answer = requestDecisions(client, paused.__interrupt__![0]!, {
      run: session,
      messages: paused.messages,
    });
    const batch = await emailBatch();
    expect(batch.calls[0]).toMatchObject({ toolCallId: "call-cy", args: { to: "cy" } });
    await decide(reviewer, batch.calls[0], "edit", { editedArgs: { to: "cy@example.com" } });
    const resume = await answer;
    expect(resume).toEqual({
      decisions: [
        { type: "edit", editedAction: { name: "send_email", args: { to: "cy@example.com" } } },
      ],
    });

    await agent.invoke(new Command({ resume }), config);
    expect(sent).toEqual(["cy@example.com"]);
    await session.complete();
  });
});

describe("invokeWithApproval", () => {
  it("asks about a step's calls in one batch; a rejection keeps the step's approved call from running", async () => {
    const { agent, sent } = emailAgent(["ana", "bo"]);
    const client = new Countersign({ baseUrl: server.baseUrl, apiKey: team.agent.key });
    const running = invokeWithApproval(
      agent,
      { messages: [{ role: "user", content: "Email Ana and Bo." }] },
      { client, config: { configurable: { thread_id: "emails" } } },
    );
    running.catch(() => {});

    const batch = await emailBatch();
    expect(batch.calls.map((c: any) => [c.toolCallId, c.args.to])).toEqual([
      ["call-ana", "ana"],
      ["call-bo", "bo"],
    ]);
    await decide(reviewer, batch.calls[0], "approve");
    await decide(reviewer, batch.calls[1], "reject", { reason: "Bo left." });

    const { runId, batches } = await running;
    expect(batches.map((b) => b?.outcome)).toEqual(["mixed"]);
    // LangGraph's middleware runs none of a step's calls once one is rejected; the run says so.
    expect(sent).toEqual([]);
    const [notRun] = await eventsOf(runId!, "tool.failed");
    expect(notRun!.data).toMatchObject({ toolCallId: "call-ana", error: { name: "NotRun" } });
  });
});

describe("decisionsFrom", () => {
  const action = { name: "deploy", args: { env: "staging" } };
  const pending = (allowed: PendingAction["allowed"]): PendingAction[] => [
    { toolCallId: "t1", action, allowed },
  ];
  const settled = (call: Record<string, unknown>) =>
    ({ id: "b1", cancelReason: null, calls: [{ toolCallId: "t1", ...call }] }) as any;
  const approved = (editedArgs: unknown = null) =>
    settled({
      status: "approved",
      decision: { outcome: "approved", source: "reviewer", by: null, reason: null, editedArgs },
    });

  it("answers an edit as approve when the args did not change, and as edit when they did", () => {
    const all = pending(["approve", "edit", "reject"]);
    expect(decisionsFrom(approved({ env: "staging" }), all)).toEqual([{ type: "approve" }]);
    expect(decisionsFrom(approved({ env: "prod" }), all)).toEqual([
      { type: "edit", editedAction: { name: "deploy", args: { env: "prod" } } },
    ]);
  });

  it("refuses an edited approval where edits are not allowed, telling the model what was approved", () => {
    const [decision] = decisionsFrom(approved({ env: "prod" }), pending(["approve", "reject"]));
    expect(decision).toEqual({
      type: "reject",
      message: expect.stringContaining('only with these arguments: {"env":"prod"}'),
    });
  });

  it("says an approval as an edit with the same args where only edit is allowed", () => {
    expect(decisionsFrom(approved(), pending(["edit", "reject"]))).toEqual([
      { type: "edit", editedAction: action },
    ]);
  });

  it("throws rather than approve when a rejection cannot be expressed", () => {
    const rejected = settled({
      status: "rejected",
      decision: { outcome: "rejected", source: "reviewer", by: null, reason: "no" },
    });
    expect(() => decisionsFrom(rejected, pending(["approve", "edit"]))).toThrow(
      DecisionNotAllowedError,
    );
  });

  it("refuses every call of a request withdrawn unanswered", () => {
    expect(decisionsFrom(null, pending(["approve", "reject"]))).toEqual([
      { type: "reject", message: expect.stringContaining("withdrawn") },
    ]);
  });
});

describe("toolCallIdsFor", () => {
  it("matches action requests to the last AI message's calls by name and args", () => {
    const message = new AIMessage({
      content: "",
      tool_calls: [
        { name: "read", args: { path: "a" }, id: "r1" },
        { name: "write", args: { path: "a", content: "x" }, id: "w1" },
        { name: "write", args: { content: "y", path: "a" }, id: "w2" },
      ],
    });
    expect(
      toolCallIdsFor(
        [message],
        [
          { name: "write", args: { path: "a", content: "y" } },
          { name: "write", args: { path: "a", content: "x" } },
          { name: "write", args: { path: "b" } },
        ],
      ),
    ).toEqual(["w2", "w1", undefined]);
  });
});
