import { describe, expect, it } from "vitest";
import { rollbackOffer } from "@/lib/runs/rollback-offer";

// Who could perform a rollback: the pure rule behind the run page's offer and the reviewer's 409.

const agent = { name: "Support bot", revokedAt: null };
const claimedRun = { status: "completed" as const, origin: "api" as const, claimedAt: 1 };

describe("rollbackOffer", () => {
  it("offers it for a run a worker claimed, whose agent key still works", () => {
    expect(rollbackOffer(claimedRun, agent)).toEqual({ available: true });
    expect(rollbackOffer({ ...claimedRun, status: "failed" }, agent)).toEqual({ available: true });
    // a run still under way: its worker will claim it after the pause
    expect(
      rollbackOffer({ status: "waiting_approval", origin: "api", claimedAt: null }, agent),
    ).toEqual({ available: true });
  });

  it("says why no worker can act: MCP, a revoked key, never claimed, cancelled", () => {
    const reason = (offer: ReturnType<typeof rollbackOffer>) =>
      offer.available ? null : offer.reason;
    expect(reason(rollbackOffer({ ...claimedRun, origin: "mcp", claimedAt: null }, agent))).toMatch(
      /^No worker can roll this back: it ran through MCP/,
    );
    expect(reason(rollbackOffer(claimedRun, { ...agent, revokedAt: 5 }))).toBe(
      "No worker can roll this back: the agent key “Support bot” was revoked, so no worker can claim the run. Undo its actions by hand.",
    );
    expect(reason(rollbackOffer({ ...claimedRun, claimedAt: null }, agent))).toMatch(
      /^No worker can roll this back: no worker ever claimed this run/,
    );
    expect(reason(rollbackOffer({ ...claimedRun, status: "cancelled" }, agent))).toBe(
      "A cancelled run cannot be rolled back.",
    );
  });
});
