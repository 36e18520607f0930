import { handleMcpPost, mcpOptions, refuseMcpMethod } from "@/lib/mcp/mcp-endpoint";

// The MCP server (streamable HTTP): tools request_approval and get_approval, for agent keys.
export const dynamic = "force-dynamic";

export const POST = handleMcpPost;
export const GET = refuseMcpMethod;
export const DELETE = refuseMcpMethod;
export const PUT = refuseMcpMethod;
export const PATCH = refuseMcpMethod;
export const OPTIONS = mcpOptions;
