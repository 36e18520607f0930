import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

// The fixtures the MCP conformance suite's server scenarios ask for by name (tools such as
// `test_tool_with_progress`, resources such as `test://static-text`, prompts such as
// `test_simple_prompt`), written here from what the scenarios of @modelcontextprotocol/conformance
// 0.1.16 check. server-everything has none of them, so against it those scenarios fail both
// directly and through the gateway and say nothing; against this server they pass directly, and
// through the gateway they exercise progress, logging, sampling and elicitation during a gated
// call, and resources, prompts and completion.

const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV_SILENCE = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

export function createConformanceFixtures(): { server: McpServer; cleanup: () => void } {
  const server = new McpServer(
    { name: "conformance-fixtures", version: "1.0.0" },
    { capabilities: { logging: {}, resources: { subscribe: true } } },
  );
  const text = (value: string) => ({ type: "text" as const, text: value });
  const image = { type: "image" as const, data: PNG_1PX, mimeType: "image/png" };
  const resource = {
    type: "resource" as const,
    resource: { uri: "test://embedded", mimeType: "text/plain", text: "embedded text" },
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  server.registerTool("test_simple_text", { description: "Answers text" }, () => ({
    content: [text("simple text")],
  }));
  server.registerTool("test_image_content", { description: "Answers an image" }, () => ({
    content: [image],
  }));
  server.registerTool("test_audio_content", { description: "Answers audio" }, () => ({
    content: [{ type: "audio", data: WAV_SILENCE, mimeType: "audio/wav" }],
  }));
  server.registerTool("test_embedded_resource", { description: "Answers a resource" }, () => ({
    content: [resource],
  }));
  server.registerTool("test_multiple_content_types", { description: "Answers all" }, () => ({
    content: [text("mixed"), image, resource],
  }));
  server.registerTool("test_error_handling", { description: "Answers an error" }, () => ({
    isError: true,
    content: [text("this tool always fails")],
  }));
  server.registerTool(
    "test_tool_with_logging",
    { description: "Logs three times" },
    // (a tool without an input schema is handed only the request's context)
    async (extra) => {
      for (const step of ["started", "processing", "completed"]) {
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "info", data: `Tool execution ${step}` },
        });
        await sleep(20);
      }
      return { content: [text("logged")] };
    },
  );
  server.registerTool(
    "test_tool_with_progress",
    { description: "Reports progress" },
    async (extra) => {
      const progressToken = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress, total: 100 },
          });
        await sleep(20);
      }
      return { content: [text("done")] };
    },
  );
  server.registerTool(
    "test_sampling",
    { description: "Asks the client's model", inputSchema: { prompt: z.string() } },
    async ({ prompt }) => {
      const sampled = await server.server.createMessage({
        messages: [{ role: "user", content: text(prompt) }],
        maxTokens: 100,
      });
      return { content: [text(JSON.stringify(sampled.content))] };
    },
  );
  server.registerTool(
    "test_elicitation",
    { description: "Asks the user", inputSchema: { message: z.string() } },
    async ({ message }) => {
      const answer = await server.server.elicitInput({
        message,
        requestedSchema: {
          type: "object",
          properties: { username: { type: "string" }, email: { type: "string" } },
          required: ["username", "email"],
        },
      });
      return { content: [text(JSON.stringify(answer))] };
    },
  );

  // Elicitation schemas with every primitive's default (SEP-1034) and every enum form (SEP-1330).
  const elicitWith = (requestedSchema: Record<string, unknown>) => async () => {
    const answer = await server.server.elicitInput({
      message: "Please answer",
      // legacy and titled enum forms are beyond the SDK's schema type
      requestedSchema: {
        type: "object",
        properties: requestedSchema,
      } as ElicitRequestFormParams["requestedSchema"],
    });
    return {
      content: [
        text(
          `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content)}`,
        ),
      ],
    };
  };
  server.registerTool(
    "test_elicitation_sep1034_defaults",
    { description: "Asks with defaults" },
    elicitWith({
      name: { type: "string", default: "John Doe" },
      age: { type: "integer", default: 30 },
      score: { type: "number", default: 95.5 },
      status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
      verified: { type: "boolean", default: true },
    }),
  );
  const titled = (prefix: string, titles: string[]) =>
    titles.map((title, i) => ({ const: `${prefix}${i + 1}`, title }));
  server.registerTool(
    "test_elicitation_sep1330_enums",
    { description: "Asks with enums" },
    elicitWith({
      untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
      titledSingle: {
        type: "string",
        oneOf: titled("value", ["First Option", "Second Option", "Third Option"]),
      },
      legacyEnum: {
        type: "string",
        enum: ["opt1", "opt2", "opt3"],
        enumNames: ["Option One", "Option Two", "Option Three"],
      },
      untitledMulti: {
        type: "array",
        items: { type: "string", enum: ["option1", "option2", "option3"] },
      },
      titledMulti: {
        type: "array",
        items: { anyOf: titled("value", ["First Choice", "Second Choice", "Third Choice"]) },
      },
    }),
  );

  server.registerResource(
    "static-text",
    "test://static-text",
    { mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "static text" }] }),
  );
  server.registerResource(
    "static-binary",
    "test://static-binary",
    { mimeType: "image/png" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG_1PX }] }),
  );
  server.registerResource(
    "watched-resource",
    "test://watched-resource",
    { mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "watched" }] }),
  );
  server.registerResource(
    "template",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { mimeType: "application/json" },
    (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id }) }],
    }),
  );
  // McpServer answers resources/subscribe only when asked to.
  server.server.setRequestHandler(
    z.object({ method: z.literal("resources/subscribe"), params: z.object({ uri: z.string() }) }),
    () => ({}),
  );
  server.server.setRequestHandler(
    z.object({
      method: z.literal("resources/unsubscribe"),
      params: z.object({ uri: z.string() }),
    }),
    () => ({}),
  );

  server.registerPrompt("test_simple_prompt", { description: "Simple" }, () => ({
    messages: [{ role: "user", content: text("a simple prompt") }],
  }));
  server.registerPrompt(
    "test_prompt_with_arguments",
    {
      description: "With arguments",
      argsSchema: {
        arg1: completable(z.string(), (value) =>
          ["test-one", "test-two"].filter((v) => v.startsWith(value)),
        ),
        arg2: z.string(),
      },
    },
    ({ arg1, arg2 }) => ({
      messages: [{ role: "user", content: text(`arguments: ${arg1}, ${arg2}`) }],
    }),
  );
  server.registerPrompt(
    "test_prompt_with_embedded_resource",
    { description: "With a resource", argsSchema: { resourceUri: z.string() } },
    ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: resourceUri, mimeType: "text/plain", text: "embedded" },
          },
        },
      ],
    }),
  );
  server.registerPrompt("test_prompt_with_image", { description: "With an image" }, () => ({
    messages: [{ role: "user", content: image }],
  }));
  return { server, cleanup: () => {} };
}
