import { describe, expect, it } from "vitest";
import { DEFAULT_NEXT_PATH, safeNextPath } from "@/lib/http/safe-next";

// Finding 1 of issue 14: `/sign-in?next=/%5Cevil.example/x` sent a signed-in reviewer to
// evil.example. Every hostile value below must land on the default page, on the app's origin.

const ORIGIN = "https://countersign.example";

describe("safeNextPath", () => {
  it.each([
    // what the query string decodes to, as the page receives it
    "/\\evil.example/x",
    "/\\/evil.example",
    "\\\\evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/ /evil.example",
    "/\u00a0/evil.example",
    "/\u2028/evil.example",
    "//evil.example/x",
    "///evil.example/x",
    "//evil.example@countersign.example",
    // still encoded (a `next` passed on twice)
    "/%5Cevil.example/x",
    "/%5cevil.example/x",
    "/%09/evil.example",
    "/%2F/evil.example",
    "/%2f%2fevil.example",
    "/%0a/evil.example",
    "/%zz",
    // dot segments that resolve to `//host`
    "/.//evil.example/x",
    "/././/evil.example",
    "/a/..//evil.example",
    "/..//evil.example",
    "/%2e//evil.example",
    // not a path at all
    "https://evil.example/x",
    "http:/evil.example",
    "javascript:alert(1)",
    "evil.example",
    "",
    undefined,
    ["/queue", "//evil.example"],
  ])("refuses %j", (next) => {
    expect(safeNextPath(next, ORIGIN)).toBe(DEFAULT_NEXT_PATH);
  });

  it.each([
    ["/queue", "/queue"],
    ["/batches/0193-ab?tab=calls#votes", "/batches/0193-ab?tab=calls#votes"],
    ["/embed/batches/x%2Fy", "/embed/batches/x%2Fy"],
    ["/history?q=a%20b", "/history?q=a%20b"],
    ["/queues/../runs/1", "/runs/1"],
  ])("keeps the same-origin path %j", (next, path) => {
    expect(safeNextPath(next, ORIGIN)).toBe(path);
  });

  it("always answers a path that stays on the origin", () => {
    for (const next of ["/\\evil.example", "/queue", "//evil.example", "/%5C%5Cevil"]) {
      const url = new URL(safeNextPath(next, ORIGIN), ORIGIN);
      expect(url.origin).toBe(ORIGIN);
    }
  });
});
