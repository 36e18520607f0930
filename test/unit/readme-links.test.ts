import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

// The documents are read from a clone of this repository: a link to a file outside it (say the
// team's notes beside the checkout) is a dead link for everyone else, and so is a link a move
// left behind. Every Markdown file of the repository is checked, not only the README.
const root = join(import.meta.dirname, "..", "..");
const skipped = new Set(["node_modules", ".git", ".next", "dist", ".venv", "data"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name) || entry.name.startsWith(".pytest")) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** Relative link targets of a Markdown text, without their #fragment; code blocks skipped. */
function relativeTargets(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^(https?:|mailto:|#)/.test(target))
    .map((target) => target.split("#")[0]!);
}

const documents = markdownFiles(root);
const readme = readFileSync(join(root, "README.md"), "utf8");

describe("documentation links", () => {
  it("finds the documents beside the code", () => {
    const names = documents.map((file) => relative(root, file));
    for (const expected of [
      "README.md",
      "lib/README.md",
      "lib/SECURITY.md",
      "test/bench/README.md",
    ])
      expect(names).toContain(expected);
  });

  it.each(documents.map((file) => [relative(root, file), file]))(
    "%s links only files that exist inside the repository",
    (_name, file) => {
      for (const target of relativeTargets(readFileSync(file, "utf8"))) {
        const resolved = join(dirname(file), target);
        expect(relative(root, resolved).startsWith(".."), `${target} leaves the repository`).toBe(
          false,
        );
        expect(existsSync(resolved), `${target} does not exist`).toBe(true);
      }
    },
  );

  it("names no document outside the repository, and cites the design kept in it", () => {
    for (const file of documents)
      expect(readFileSync(file, "utf8"), relative(root, file)).not.toMatch(
        /shared\/(API|DESIGN|STYLE)\.md/,
      );
    expect(readme).toContain("/api/v1/openapi.json");
    expect(readme).toContain("(lib/README.md)");
  });

  it("keeps the README a newcomer reads to the end: under 400 lines", () => {
    expect(readme.split("\n").length).toBeLessThan(400);
  });
});
