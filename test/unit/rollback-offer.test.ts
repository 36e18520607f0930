import { describe, expect, it } from "vitest";
import { rollbackOffer } from "@/lib/runs/rollback-offer";

// Who could perform a rollback: the pure rule behind the run page's offer and the reviewer's 409.

const agent = { name: "Support bot", revokedAt: null };
const claimedRun = { status: "completed" as const, origin: "api" as const, claimedAt: 1 };
/** reported actions with revert data, and how many are not reverted yet */
const none = { reported: 0, left: 0 };
const open = { reported: 2, left: 1 };

describe("rollbackOffer", () => {
  it("offers it for a run a worker claimed, whose agent key still works", () => {
    expect(rollbackOffer(claimedRun, agent, none)).toEqual({ available: true });
    expect(rollbackOffer({ ...claimedRun, status: "failed" }, agent, none)).toEqual({
      available: true,
    });
    // a run still under way: its worker will claim it after the pause
    expect(
      rollbackOffer({ status: "waiting_approval", origin: "api", claimedAt: null }, agent, none),
    ).toEqual({ available: true });
  });

  it("says why no worker can act: MCP, a revoked key, never claimed, cancelled", () => {
    const reason = (offer: ReturnType<typeof rollbackOffer>) =>
      offer.available ? null : offer.reason;
    expect(
      reason(rollbackOffer({ ...claimedRun, origin: "mcp", claimedAt: null }, agent, none)),
    ).toMatch(/^No worker can roll this back: it ran through MCP/);
    expect(reason(rollbackOffer(claimedRun, { ...agent, revokedAt: 5 }, none))).toBe(
      "No worker can roll this back: the agent key “Support bot” was revoked, so no worker can claim the run. Undo its actions by hand.",
    );
    expect(reason(rollbackOffer({ ...claimedRun, claimedAt: null }, agent, none))).toMatch(
      /^No worker can roll this back: no worker ever claimed this run/,
    );
    expect(reason(rollbackOffer({ ...claimedRun, status: "cancelled" }, agent, none))).toBe(
      "A cancelled run cannot be rolled back.",
    );
  });

  it("offers nothing for a finished run whose every reported action was reverted (issue 24)", () => {
    expect(rollbackOffer(claimedRun, agent, open)).toEqual({ available: true });
    expect(rollbackOffer(claimedRun, agent, { reported: 2, left: 0 })).toEqual({
      available: false,
      reason:
        "Nothing left to roll back: all 2 actions this run reported with revert data were already reverted.",
      nothingLeft: true,
    });
    expect(
      rollbackOffer({ ...claimedRun, status: "failed" }, agent, { reported: 1, left: 0 }),
    ).toMatchObject({
      available: false,
      reason: expect.stringMatching(/^Nothing left to roll back: the one action/),
    });
    // a run under way may report more; one that reported nothing revertable is as before
    expect(
      rollbackOffer({ ...claimedRun, status: "running" }, agent, { reported: 1, left: 0 }),
    ).toEqual({ available: true });
    expect(rollbackOffer(claimedRun, agent, none)).toEqual({ available: true });
  });
});
