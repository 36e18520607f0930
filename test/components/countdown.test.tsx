// @vitest-environment happy-dom
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Countdown } from "@/components/review-card/countdown";
import { formatRemaining } from "@/components/review-card/format";
import { secondsLeft } from "@/components/review-card/use-clock";

afterEach(cleanup);

const MINUTE = 60_000;

describe("secondsLeft", () => {
  it("rounds up to whole seconds, so a full deadline reads as itself", () => {
    const start = 1_700_000_000_500; // mid-second, as a real batch's createdAt is
    const end = start + 30 * MINUTE;
    expect(formatRemaining(secondsLeft(end, start) * 1000)).toBe("30:00");
    expect(formatRemaining(secondsLeft(end, start + 1) * 1000)).toBe("30:00");
    expect(formatRemaining(secondsLeft(end, start + 999) * 1000)).toBe("30:00");
    // a full second gone: 29:59 (and never 30:01 on the way)
    expect(formatRemaining(secondsLeft(end, start + 1000) * 1000)).toBe("29:59");
    expect(formatRemaining(secondsLeft(end, start + 1999) * 1000)).toBe("29:59");
  });

  it("reads 0:01 until the very end, and 0 at and after it", () => {
    const end = 1_700_000_000_000;
    expect(secondsLeft(end, end - 1)).toBe(1);
    expect(secondsLeft(end, end - 1000)).toBe(1);
    expect(secondsLeft(end, end - 1001)).toBe(2);
    expect(secondsLeft(end, end)).toBe(0);
    expect(secondsLeft(end, end + 5000)).toBe(0);
  });

  it("keeps hours and days exact at their boundaries", () => {
    const end = 1_700_000_000_000;
    expect(formatRemaining(secondsLeft(end, end - 60 * MINUTE) * 1000)).toBe("1:00:00");
    expect(formatRemaining(secondsLeft(end, end - 60 * MINUTE + 1) * 1000)).toBe("1:00:00");
    expect(formatRemaining(secondsLeft(end, end - 60 * MINUTE + 1001) * 1000)).toBe("59:59");
    expect(formatRemaining(secondsLeft(end, end - 24 * 60 * MINUTE) * 1000)).toBe("1 d 0 h");
  });
});

describe("Countdown", () => {
  it("shows 30:00 left for a 30-minute deadline read mid-second (not 30:01)", () => {
    const now = 1_700_000_000_750;
    render(
      <Countdown
        expiresAt={new Date(now + 30 * MINUTE).toISOString()}
        onTimeout="reject"
        now={() => now}
      />,
    );
    expect(screen.getByRole("timer").textContent).toBe("30:00 left");
  });

  it("says the deadline passed at the deadline", () => {
    const now = 1_700_000_000_000;
    render(
      <Countdown expiresAt={new Date(now).toISOString()} onTimeout="reject" now={() => now} />,
    );
    expect(screen.getByTestId("countdown").textContent).toContain("Deadline passed");
  });
});
