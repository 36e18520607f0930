import { describe, expect, it, vi } from "vitest";
import { beginShutdown, onRequestEnd } from "@/lib/shutdown";

// onRequestEnd keeps one listener on the shutdown signal for every open request (streams,
// long-polls): each request must still end exactly once, on its own abort or on shutdown, and
// not at all once it stopped listening.

describe("onRequestEnd", () => {
  it("ends each request once, on its own abort or on shutdown, and never after it stopped listening", () => {
    const aborted = new AbortController();
    const endedByAbort = vi.fn();
    onRequestEnd(aborted.signal, endedByAbort);

    const stopped = new AbortController();
    const endedAfterStop = vi.fn();
    const stop = onRequestEnd(stopped.signal, endedAfterStop);

    const open = Array.from({ length: 1000 }, () => vi.fn());
    for (const end of open) onRequestEnd(new AbortController().signal, end);

    aborted.abort();
    expect(endedByAbort).toHaveBeenCalledTimes(1);
    stop();
    stopped.abort();

    beginShutdown();
    expect(endedByAbort).toHaveBeenCalledTimes(1);
    expect(endedAfterStop).not.toHaveBeenCalled();
    for (const end of open) expect(end).toHaveBeenCalledTimes(1);

    // a request that arrives while the server is stopping ends at once
    const late = vi.fn();
    onRequestEnd(new AbortController().signal, late);
    expect(late).toHaveBeenCalledTimes(1);
  });
});
