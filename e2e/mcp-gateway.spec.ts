import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "./support/test";
import { baseURL, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";
import { filesystemRoot, throughGateway } from "@/test/mcp-gateway/gateway-process";

// Issue 25 end to end in the browser: an MCP client (the official SDK) calls server-filesystem's
// write_file through countersign-mcp-gateway; the call waits while a reviewer sees the gateway's
// card live in the queue and approves it; only then is the file written.

test("a reviewer approves a gateway card in the browser while the MCP client waits", async ({
  page,
}) => {
  const team = await seedTeam();
  const root = filesystemRoot();
  const gateway = await throughGateway({
    countersignUrl: baseURL,
    agentKey: team.agentKey,
    root,
    name: "filesystem",
  });
  try {
    await signIn(page, team.reviewers[0]!);
    const path = join(root, "from-the-browser.txt");
    const call = gateway.client.callTool(
      { name: "write_file", arguments: { path, content: "approved in Chromium" } },
      undefined,
      { timeout: 60_000, onprogress: () => {}, resetTimeoutOnProgress: true },
    );
    call.catch(() => {});

    const card = page.locator('[data-testid="review-card"]', {
      has: page.getByTestId("tool-name").getByText("write_file", { exact: true }),
    });
    await expect(card).toBeVisible({ timeout: 15_000 });
    await expect(card).toContainText("via MCP server 'filesystem', client gateway-test-client");
    expect(existsSync(path)).toBe(false);

    // The session's run stays `running` (a gateway never pauses it): its page says what it waits on.
    const batchId = await card.getAttribute("data-batch-id");
    const { runId } = (await team.reviewerApi.get(`/batches/${batchId}`)).body;
    const runPage = await page.context().newPage();
    await runPage.goto(`/runs/${runId}`);
    const runStatus = runPage.getByTestId("run-status");
    await expect(runStatus).toHaveText("Running · waiting on a gated call");
    await shot(runPage, "gateway-run-waiting");

    await card.getByTestId("approve-button").first().click();
    const result = (await call) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe("approved in Chromium");
    await expect(card).toHaveAttribute("data-status", "decided");
    await runPage.reload();
    await expect(runStatus).toHaveText("Running");
  } finally {
    await gateway.close();
  }
});
