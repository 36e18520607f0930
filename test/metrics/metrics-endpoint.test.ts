import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/metrics/route";
import { approveBatch, pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { freshDatabase } from "@/test/support/database";
import { startServer } from "@/test/support/server";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// /metrics: off without METRICS_TOKEN, refused without the token, and with it the text exposition
// format holding every metric lib/metrics/README.md documents, whose values follow a real decision.

// at least 32 characters: a shorter METRICS_TOKEN stops the start (below)
const TOKEN = "metrics-test-token-0123456789abcdef";
let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("metrics", { METRICS_TOKEN: TOKEN });
}, 90_000);
afterAll(() => server?.stop());

async function scrape(token: string | null = TOKEN) {
  const response = await fetch(`${server.baseUrl}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    text: await response.text(),
  };
}

/** The value of one sample, by its name and labels as printed (`name{a="b"}`); 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** The metric names of the table in lib/metrics/README.md. */
function documentedNames(): string[] {
  const table = readFileSync("lib/metrics/README.md", "utf8");
  return [...new Set([...table.matchAll(/^\| `(countersign_[a-z_]+)`/gm)].map((m) => m[1]!))];
}

describe("/metrics", () => {
  it("is off (404, saying how to turn it on) when no METRICS_TOKEN is set", async () => {
    const saved = process.env.METRICS_TOKEN;
    delete process.env.METRICS_TOKEN;
    try {
      const response = await GET(new Request("http://localhost/metrics"));
      expect(response.status).toBe(404);
      expect(await response.text()).toContain("set METRICS_TOKEN");
    } finally {
      if (saved !== undefined) process.env.METRICS_TOKEN = saved;
    }
  });

  it("refuses a scrape without the token, or with another", async () => {
    for (const token of [null, "wrong-token", `${TOKEN}x`]) {
      const answer = await scrape(token);
      expect(answer.status, String(token)).toBe(401);
      expect(answer.text).not.toContain("countersign_");
    }
  });

  it("serves every documented metric, in the text format, and counts a decision", async () => {
    const names = documentedNames();
    expect(names.length).toBeGreaterThanOrEqual(10);
    const queue = await makeQueue();
    const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
    const agentKey = await makeAgentKey({ queues: [queue.name] });
    const { batch } = await pausedRun(apiClient(server.baseUrl, agentKey.key), refundBatch());

    const before = await scrape();
    expect(before.status).toBe(200);
    expect(before.type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of names) expect(before.text, name).toContain(`# TYPE ${name} `);
    const depth = `countersign_queue_depth{queue_id="${queue.id}",queue="${queue.name}"}`;
    expect(sample(before.text, depth)).toBe(1);
    const approvals = 'countersign_decisions_total{outcome="approved",source="reviewer"}';
    const waits = `countersign_time_to_decision_seconds_count{queue_id="${queue.id}",status="decided"}`;
    const writes = 'countersign_write_batch_duration_seconds_count{result="committed"}';

    await approveBatch(apiClient(server.baseUrl, reviewer.token), batch);
    const after = await scrape();
    expect(sample(after.text, approvals) - sample(before.text, approvals)).toBe(1);
    expect(sample(after.text, waits)).toBe(1);
    expect(sample(after.text, writes)).toBeGreaterThan(sample(before.text, writes));
    expect(sample(after.text, depth)).toBe(0);
    expect(sample(after.text, "countersign_webhook_backlog")).toBe(0);
    expect(after.text).toContain('countersign_stream_connections{kind="reviewer"} 0');
  });

  it("refuses to start with a METRICS_TOKEN under 32 characters, saying so", async () => {
    await expect(
      startServer({
        databaseUrl: await freshDatabase("metrics-short-token"),
        env: { METRICS_TOKEN: "only-thirty-one-characters-long" },
      }),
    ).rejects.toThrow(/METRICS_TOKEN: must be at least 32 characters/);
  }, 60_000);

  // Last: it blocks this address's bearer requests for the rest of the window.
  it("answers 429 once wrong tokens pass the bearer-guess limit, the right token included (issue 24)", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await scrape(`guess-${i}-${TOKEN}`)).status);
    // BEARER_FAILURES_PER_WINDOW (30) wrong tokens from this address in all, two of them above
    const blockedFrom = statuses.indexOf(429);
    expect(blockedFrom, statuses.join(" ")).toBeGreaterThan(0);
    expect(blockedFrom).toBeLessThanOrEqual(30);
    expect(statuses.slice(0, blockedFrom).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(blockedFrom).every((s) => s === 429)).toBe(true);
    // the block confirms no guess: the right token waits out the window too
    const right = await fetch(`${server.baseUrl}/metrics`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await right.text()).not.toContain("countersign_");
  });
});
