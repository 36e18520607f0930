// @vitest-environment happy-dom
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { RunStatusBadge } from "@/components/run-timeline/badges";
import type { RunView } from "@/lib/read-models/batch-run-views";

// An MCP gateway records each tool call on its session's run without pausing it: the run stays
// `running` while a person is asked. Its page says it is waiting on the gated call.

afterEach(cleanup);

type Batches = NonNullable<RunView["batches"]>;
const batchOf = (status: Batches[number]["status"]) => ({ status }) as Batches[number];

function statusOf(run: { status: RunView["status"]; batches?: Batches }) {
  render(<RunStatusBadge run={run} />);
  return screen.getByTestId("run-status").textContent;
}

describe("the run page's status", () => {
  it("says a running run with a card pending is waiting on a gated call", () => {
    expect(statusOf({ status: "running", batches: [batchOf("decided"), batchOf("pending")] })).toBe(
      "Running · waiting on a gated call",
    );
  });

  it("counts the gated calls waiting", () => {
    expect(statusOf({ status: "running", batches: [batchOf("pending"), batchOf("pending")] })).toBe(
      "Running · waiting on 2 gated calls",
    );
  });

  it("says Running once nothing waits, and the run's own status otherwise", () => {
    expect(statusOf({ status: "running", batches: [batchOf("decided")] })).toBe("Running");
    cleanup();
    expect(statusOf({ status: "waiting_approval", batches: [batchOf("pending")] })).toBe(
      "Waiting for approval",
    );
  });
});
