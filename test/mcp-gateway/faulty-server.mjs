// A deliberately broken MCP server over stdio, spoken by hand (no SDK) so it can misbehave in
// ways a real server would not choose to: its tools `echo` (answers), `crash` (exits mid-call),
// `hang` (never answers) and `garbage` (answers with something that is not a tool result).
import { createInterface } from "node:readline";

const send = (message) =>
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
const tool = (name) => ({ name, inputSchema: { type: "object" } });

createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return; // notifications
  const { id, method, params } = message;
  if (method === "initialize")
    return send({
      id,
      result: {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "faulty", version: "0.0.1" },
      },
    });
  if (method === "tools/list")
    return send({ id, result: { tools: ["echo", "crash", "hang", "garbage"].map(tool) } });
  if (method === "tools/call") {
    if (params.name === "echo")
      return send({
        id,
        result: { content: [{ type: "text", text: JSON.stringify(params.arguments) }] },
      });
    if (params.name === "crash") process.exit(3);
    if (params.name === "hang") return;
    if (params.name === "garbage") return send({ id, result: { content: "not a list of parts" } });
  }
  send({ id, error: { code: -32601, message: "Method not found" } });
});
