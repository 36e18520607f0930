import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { MemorySaver } from "@langchain/langgraph";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import {
  AIMessage,
  createAgent,
  fakeModel,
  HumanMessage,
  humanInTheLoopMiddleware,
  ToolMessage,
  tool,
} from "langchain";
import { z } from "zod";
import { Countersign } from "../index.js";
import { invokeWithApproval } from "../adapters/langgraph.js";

// A LangChain agent whose file writes wait for a person in Countersign. It reads notes.md freely,
// proposes a write (the human-in-the-loop middleware interrupts), and the reviewer approves,
// edits or rejects it on the card. The model is scripted (no API key, no network): swap
// `scriptedModel()` for a real one, e.g. `model: "openai:gpt-4.1"`, and nothing else changes.
//
//   COUNTERSIGN_URL=http://127.0.0.1:3000 COUNTERSIGN_AGENT_KEY=cs_agent_… \
//     npx tsx lib/sdk/examples/langgraph.ts

export type ExampleOptions = {
  baseUrl: string;
  apiKey: string;
  /** a queue the agent key may target (default: the key's default queue) */
  queue?: string;
  /** the directory the agent works in (default: a fresh temporary one) */
  workspace?: string;
  log?: (line: string) => void;
};

export type ExampleResult = {
  /** the agent's final answer */
  answer: string;
  runId: string | null;
  workspace: string;
  /** every tool call that actually ran, with its args */
  toolRuns: { name: string; args: Record<string, unknown> }[];
  /** the tool results the model read before its final answer (a rejection's message among them) */
  modelSaw: string[];
};

const PROPOSED_NOTES = "# Notes\n\n- Standup: ship the LangGraph adapter.\n";

const WriteFileArgs = z.object({
  path: z.string().describe("a path inside the workspace"),
  content: z.string().describe("the whole new content of the file"),
});
const ReadFileArgs = z.object({ path: z.string().describe("a path inside the workspace") });

export async function main(options: ExampleOptions): Promise<ExampleResult> {
  const log = options.log ?? console.log;
  const workspace = options.workspace ?? (await mkdtemp(join(tmpdir(), "countersign-langgraph-")));
  await writeFile(join(workspace, "notes.md"), "# Notes\n");
  const toolRuns: ExampleResult["toolRuns"] = [];
  const inside = (path: string) => {
    const full = resolve(workspace, path);
    if (relative(workspace, full).startsWith(".."))
      throw new Error(`${path} is outside the workspace`);
    return full;
  };

  const readFileTool = tool(
    async (args) => {
      toolRuns.push({ name: "read_file", args });
      return readFile(inside(args.path), "utf8");
    },
    { name: "read_file", description: "Read a file of the workspace.", schema: ReadFileArgs },
  );
  const writeFileTool = tool(
    async (args) => {
      toolRuns.push({ name: "write_file", args });
      await writeFile(inside(args.path), args.content);
      return `Wrote ${args.content.length} characters to ${args.path}.`;
    },
    { name: "write_file", description: "Replace a file of the workspace.", schema: WriteFileArgs },
  );

  const model = scriptedModel();
  const agent = createAgent({
    model,
    tools: [readFileTool, writeFileTool],
    middleware: [
      humanInTheLoopMiddleware({
        interruptOn: {
          write_file: {
            allowedDecisions: ["approve", "edit", "reject"],
            description: (call) =>
              `Replace ${String(call.args.path)} (${String(call.args.content).length} characters)`,
            // Countersign checks reviewers' edits against it.
            argsSchema: toJsonSchema(WriteFileArgs) as Record<string, unknown>,
          },
          read_file: false,
        },
      }),
    ],
    // The interrupted thread lives here while the reviewer decides (use a durable one in production).
    checkpointer: new MemorySaver(),
  });

  const client = new Countersign({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const { state, runId } = await invokeWithApproval(
    agent,
    { messages: [new HumanMessage("Add today's standup note to notes.md.")] },
    {
      client,
      config: { configurable: { thread_id: `notes-${Date.now()}` } },
      queue: options.queue,
      onPause: (actions) =>
        log(`Waiting for a reviewer in Countersign: ${actions.map((a) => a.name).join(", ")}`),
      onDecision: (batch, decisions) => {
        const by = batch?.calls.find((call) => call.decision?.by)?.decision?.by?.name;
        log(`Decided${by ? ` by ${by}` : ""}: ${decisions.map((d) => d.type).join(", ")}`);
      },
    },
  );

  const answer = state.messages.at(-1)?.text ?? "";
  const lastCall = model.calls.at(-1)?.messages ?? [];
  const modelSaw = lastCall.filter((m) => ToolMessage.isInstance(m)).map((m) => m.text);
  log(`Agent: ${answer}`);
  log(
    `${join(workspace, "notes.md")} now reads:\n${await readFile(join(workspace, "notes.md"), "utf8")}`,
  );
  return { answer, runId, workspace, toolRuns, modelSaw };
}

/** Stands in for a real model: read the notes, propose a write, then report what happened. */
function scriptedModel() {
  return fakeModel()
    .respondWithTools([{ name: "read_file", args: { path: "notes.md" } }])
    .respondWithTools([{ name: "write_file", args: { path: "notes.md", content: PROPOSED_NOTES } }])
    .respond((messages) => {
      const result = messages.findLast((m) => ToolMessage.isInstance(m));
      const text = result?.text ?? "nothing happened";
      return new AIMessage(
        ToolMessage.isInstance(result) && result.status === "error"
          ? `I did not change notes.md. ${text}`
          : `Done. ${text}`,
      );
    });
}

const USAGE = `Run a LangChain agent whose file writes wait for approval in Countersign.

  COUNTERSIGN_URL        the app, e.g. http://127.0.0.1:3000 (start it with npm start)
  COUNTERSIGN_AGENT_KEY  an agent key: npm run admin -- agent create --name "Notes bot" --queue General
  COUNTERSIGN_QUEUE      optional: a queue the key may target

Then: npx tsx lib/sdk/examples/langgraph.ts, and decide the card in the app's queue.`;

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const baseUrl = process.env.COUNTERSIGN_URL;
  const apiKey = process.env.COUNTERSIGN_AGENT_KEY;
  if (!baseUrl || !apiKey) {
    console.error(`Missing ${!baseUrl ? "COUNTERSIGN_URL" : "COUNTERSIGN_AGENT_KEY"}.\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    main({ baseUrl, apiKey, queue: process.env.COUNTERSIGN_QUEUE }).catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    });
  }
}
