import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  type CallToolResult,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEverything, type EverythingHost } from "@/test/mcp-gateway/everything-host";
import {
  gatewayInFrontOf,
  newClient,
  type ClientSetup,
  type Connected,
} from "@/test/mcp-gateway/gateway-process";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// Issue 25's transparency over streamable HTTP: the reference server
// (@modelcontextprotocol/server-everything) reached through the gateway's --upstream-url looks the
// same to the official client as reached directly — initialize, tools, resources, templates,
// prompts, completion, logging, ping — and allowed calls keep the server's progress and its
// sampling requests to the client.

let server: TestServer;
let everything: EverythingHost;
let gateway: Connected;
let viaGateway: Client;
let directly: Client;

// Both clients offer sampling (server-everything then registers its sampling tool) and answer it.
const sampling: ClientSetup = {
  capabilities: { sampling: {} },
  setup: (client) =>
    client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
      model: "test-model",
      role: "assistant",
      content: {
        type: "text",
        text: `sampled: ${JSON.stringify(request.params.messages[0]?.content)}`,
      },
    })),
};

beforeAll(async () => {
  server = await startApiServer("mcp-gateway-http");
  everything = await startEverything();
  const t = await makeQuickTeam();
  const lead = await makeReviewer({ queues: [{ name: t.queue.name, role: "lead" }] });
  const rule = await apiClient(server.baseUrl, lead.token).post("/policy-rules", {
    queue: t.queue.name,
    name: "the reference server may do anything",
    effect: "allow",
    toolPattern: "everything.*",
  });
  expect(rule.status).toBe(201);
  gateway = await gatewayInFrontOf({
    countersignUrl: server.baseUrl,
    agentKey: t.agent.key,
    upstream: [],
    extra: ["--name", "everything", "--upstream-url", everything.url],
    client: sampling,
  });
  viaGateway = gateway.client;
  directly = newClient(sampling);
  await directly.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
}, 60_000);
afterAll(async () => {
  await gateway?.close().catch(() => {});
  await directly?.close().catch(() => {});
  await everything?.close();
  await server?.stop();
});

describe("through the gateway, as directly", () => {
  it("initialize: server info, capabilities and instructions", () => {
    expect(viaGateway.getServerVersion()).toEqual(directly.getServerVersion());
    expect(viaGateway.getServerCapabilities()).toEqual(directly.getServerCapabilities());
    expect(viaGateway.getInstructions()).toEqual(directly.getInstructions());
    expect(viaGateway.getServerVersion()?.name).toBe("mcp-servers/everything");
  });

  it("lists: tools, resources, resource templates, prompts", async () => {
    expect(await viaGateway.listTools()).toEqual(await directly.listTools());
    expect((await viaGateway.listTools()).tools.map((t) => t.name)).toContain(
      "trigger-sampling-request",
    );
    expect(await viaGateway.listResources()).toEqual(await directly.listResources());
    expect(await viaGateway.listResourceTemplates()).toEqual(
      await directly.listResourceTemplates(),
    );
    expect(await viaGateway.listPrompts()).toEqual(await directly.listPrompts());
  });

  it("resources/read, prompts/get, completion/complete, logging/setLevel, ping", async () => {
    const [resource] = (await directly.listResources()).resources;
    expect(await viaGateway.readResource({ uri: resource!.uri })).toEqual(
      await directly.readResource({ uri: resource!.uri }),
    );
    const prompt = { name: "args-prompt", arguments: { city: "Lyon", state: "Rhône" } };
    expect(await viaGateway.getPrompt(prompt)).toEqual(await directly.getPrompt(prompt));
    const completion = {
      ref: { type: "ref/prompt" as const, name: "completable-prompt" },
      argument: { name: "department", value: "S" },
    };
    expect(await viaGateway.complete(completion)).toEqual(await directly.complete(completion));
    expect((await viaGateway.complete(completion)).completion.values).toEqual(["Sales", "Support"]);
    await expect(viaGateway.setLoggingLevel("debug")).resolves.toEqual({});
    await expect(viaGateway.ping()).resolves.toEqual({});
  });

  it("an allowed call answers as directly, keeping the server's progress", async () => {
    const echo = { name: "echo", arguments: { message: "through the gate" } };
    expect(await viaGateway.callTool(echo)).toEqual(await directly.callTool(echo));
    const progress: Progress[] = [];
    const result = (await viaGateway.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    // The server's progress passes through, in order, before the result (the gateway writes them
    // so). The MCP SDK's client runs notification handlers a microtask late but responses at once,
    // so when the last progress and the result arrive in one stdio read it drops that progress
    // ("unknown token"); the same happens to any stdio server that answers right after a progress.
    const seen = progress.map((p) => [p.progress, p.total]);
    expect(seen.slice(0, 2)).toEqual([
      [1, 3],
      [2, 3],
    ]);
    expect([
      [1, 3],
      [2, 3],
      [3, 3],
    ]).toEqual(expect.arrayContaining(seen));
  });

  it("the server's sampling request reaches the client during an allowed call", async () => {
    const result = (await viaGateway.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "hello", maxTokens: 5 },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain("sampled: ");
  });
});
