import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Imports point down: no folder of lib/ imports a folder that imports it back (through any number
// of steps), db/ and lib/ never import app/, and inside the two client packages (lib/sdk and the
// Python package) no file imports a file that imports it back. The graph is built from the sources
// as they are: `@/` and relative specifiers resolved to files, `import type` and `export … from`
// counted like any import (a type-only edge still means one folder has to be read to understand the
// other), dynamic `import()` counted too.
const root = join(import.meta.dirname, "..", "..");
const skipped = new Set(["node_modules", "dist", ".venv", "__pycache__", ".pytest_cache"]);

function sourceFiles(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path, pattern);
    return pattern.test(entry.name) ? [path] : [];
  });
}

const posix = (path: string) => relative(root, path).split(sep).join("/");

function resolveFile(base: string): string | undefined {
  const candidates = [
    base,
    base.replace(/\.js$/, ".ts"),
    base.replace(/\.js$/, ".tsx"),
    `${base}.ts`,
    `${base}.tsx`,
    join(base, "index.ts"),
    join(base, "index.tsx"),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

/** The repository files a TypeScript file imports (packages from node_modules left out). */
function tsImports(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles.flatMap(({ fileName: spec }) => {
    let base: string | undefined;
    if (spec.startsWith("@/")) base = join(root, spec.slice(2));
    else if (spec === "@countersign/sdk") base = join(root, "lib/sdk/index.ts");
    else if (spec.startsWith(".")) base = join(dirname(file), spec);
    const resolved = base === undefined ? undefined : resolveFile(base);
    return resolved === undefined ? [] : [posix(resolved)];
  });
}

type Graph = Map<string, Map<string, string[]>>; // node → node it imports → the file edges behind it

function addEdge(graph: Graph, from: string, to: string, why: string): void {
  if (!graph.has(from)) graph.set(from, new Map());
  if (!graph.has(to)) graph.set(to, new Map());
  if (from === to) return;
  const reasons = graph.get(from)!.get(to) ?? [];
  reasons.push(why);
  graph.get(from)!.set(to, reasons);
}

/** Strongly connected components with more than one node: every circle lies inside one. */
function circles(graph: Graph): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)!.keys()) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) visit(node);
  return found;
}

/** A circle's edges, each with the first file import behind it, for a readable failure. */
function describeCircle(graph: Graph, component: string[]): string {
  const members = new Set(component);
  const lines = component.flatMap((from) =>
    [...graph.get(from)!.entries()]
      .filter(([to]) => members.has(to))
      .map(
        ([to, why]) =>
          `  ${from} → ${to}  (${why[0]}${why.length > 1 ? `, +${why.length - 1}` : ""})`,
      ),
  );
  return [`circle among ${component.join(", ")}:`, ...lines].join("\n");
}

/** lib/<folder> for a file in a folder of lib/, lib/<name> for a file at lib/'s top, else its top folder. */
function folderOf(path: string): string {
  const parts = path.split("/");
  if (parts[0] !== "lib") return parts[0]!;
  return parts.length === 2 ? `lib/${parts[1]!.replace(/\.tsx?$/, "")}` : `lib/${parts[1]}`;
}

const serverFiles = [
  ...sourceFiles(join(root, "lib"), /\.tsx?$/),
  ...sourceFiles(join(root, "db"), /\.ts$/),
]
  .filter((file) => !file.endsWith(".d.ts"))
  .map(posix);
const fileImports = new Map(serverFiles.map((file) => [file, tsImports(join(root, file))]));

// The production server's dispatch table calls the API's route handlers directly (lib/README.md,
// Choices): the one file of lib/ that imports app/, by design.
const MAY_IMPORT_APP = new Set(["lib/http/api-routes.ts"]);

describe("the import graph", () => {
  it("has no circle among the folders of lib/ (and db/)", () => {
    const graph: Graph = new Map();
    for (const [file, imports] of fileImports) {
      for (const target of imports) {
        const to = folderOf(target);
        if (to === "lib" || to === "db" || to.startsWith("lib/")) {
          addEdge(graph, folderOf(file), to, `${file} → ${target}`);
        }
      }
    }
    expect(circles(graph).map((component) => describeCircle(graph, component))).toEqual([]);
  });

  it("never imports app/ from lib/ or db/ (but the production dispatch table)", () => {
    const upward = [...fileImports]
      .filter(([file]) => !MAY_IMPORT_APP.has(file))
      .flatMap(([file, imports]) =>
        imports
          .filter((target) => target.startsWith("app/"))
          .map((target) => `${file} → ${target}`),
      );
    expect(upward).toEqual([]);
  });

  it("has no circle among the files of the SDK", () => {
    const graph: Graph = new Map();
    for (const [file, imports] of fileImports) {
      if (!file.startsWith("lib/sdk/") || file.startsWith("lib/sdk/examples/")) continue;
      for (const target of imports.filter((path) => path.startsWith("lib/sdk/"))) {
        addEdge(graph, file, target, "import");
      }
    }
    expect(circles(graph).map((component) => describeCircle(graph, component))).toEqual([]);
  });

  it("has no circle among the modules of the Python package", () => {
    const packageDir = join(root, "lib/python/src/countersign");
    const graph: Graph = new Map();
    for (const path of sourceFiles(packageDir, /\.py$/)) {
      const moduleName = posix(path)
        .slice("lib/python/src/".length)
        .replace(/\.py$/, "")
        .replace(/\/__init__$/, "")
        .split("/")
        .join(".");
      const pkg = path.endsWith("__init__.py")
        ? moduleName
        : moduleName.split(".").slice(0, -1).join(".");
      const text = readFileSync(path, "utf8");
      // Every import counts, those inside a function or under `if TYPE_CHECKING:` too.
      for (const match of text.matchAll(
        /^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)/gm,
      )) {
        const up = match[1]!.length - 1;
        const base = pkg
          .split(".")
          .slice(0, pkg.split(".").length - up)
          .join(".");
        const target = match[2] ? `${base}.${match[2]}` : base;
        const names = match[2]
          ? []
          : match[3]!
              .replace(/#.*$/gm, "")
              .replace(/[()\s]/g, "")
              .split(",");
        for (const to of names.length > 0 ? names.map((name) => `${target}.${name}`) : [target]) {
          addEdge(graph, moduleName, to, "import");
        }
      }
      for (const match of text.matchAll(/^[ \t]*from[ \t]+(countersign[\w.]*)[ \t]+import/gm)) {
        addEdge(graph, moduleName, match[1]!, "import");
      }
      for (const match of text.matchAll(/^[ \t]*import[ \t]+(countersign[\w.]*)/gm)) {
        addEdge(graph, moduleName, match[1]!, "import");
      }
    }
    // Only modules that exist are nodes (`from . import x` may name a function, not a module).
    const modules = new Set(
      sourceFiles(packageDir, /\.py$/).map((path) =>
        posix(path)
          .slice("lib/python/src/".length)
          .replace(/\.py$/, "")
          .replace(/\/__init__$/, "")
          .split("/")
          .join("."),
      ),
    );
    for (const node of [...graph.keys()]) {
      if (!modules.has(node)) graph.delete(node);
      else
        for (const to of [...graph.get(node)!.keys()])
          if (!modules.has(to)) graph.get(node)!.delete(to);
    }
    // The package's __init__ re-exports everything: that is its job, and nothing inside imports it.
    expect(circles(graph).map((component) => describeCircle(graph, component))).toEqual([]);
  });
});
