import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The README is read from a clone of this repository: a link to a file outside it (say the team's
// notes beside the checkout) is a dead link for everyone else.
const root = join(import.meta.dirname, "..", "..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const relativeTargets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
  .map((match) => match[1]!)
  .filter((target) => !/^(https?:|mailto:|#)/.test(target))
  .map((target) => target.split("#")[0]!);

describe("README links", () => {
  it("links files that exist inside the repository", () => {
    expect(relativeTargets.length).toBeGreaterThan(0);
    for (const target of relativeTargets) {
      expect(target.startsWith("..") || target.startsWith("/"), target).toBe(false);
      expect(existsSync(join(root, target)), target).toBe(true);
    }
  });

  it("names no document outside the repository as the contract", () => {
    expect(readme).not.toMatch(/shared\/(API|DESIGN|STYLE)\.md/);
    expect(readme).toContain("/api/v1/openapi.json");
  });
});
