// @vitest-environment happy-dom
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import ts from "typescript";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { DecisionRequest, DecisionResult } from "@/components/review-card/index";
import {
  clock,
  dana,
  decided,
  decision,
  makeBatch,
  makeCall,
} from "@/test/components/review-card-fixtures";
import {
  ensureReviewCardBuilt,
  REVIEW_CARD_DIR,
  REVIEW_CARD_DIST,
} from "@/test/support/review-card-build";

// `@countersign/review-card` as a host app gets it: the BUILT files under
// components/review-card/dist (built here by `npm run build:card` when missing or older than the
// card's sources), rendered with the host's own data and callbacks, outside Next.js. The packed
// tarball in a host on another React is review-card-tarball.test.ts.

const root = process.cwd();
const sourceDir = REVIEW_CARD_DIR;
const outDir = REVIEW_CARD_DIST;

// The card's API is the source's; the import below is of the bundle built from it.
type CardModule = typeof import("@/components/review-card/index");
let card: CardModule;

beforeAll(async () => {
  ensureReviewCardBuilt();
  card = (await import(
    /* @vite-ignore */ pathToFileURL(join(outDir, "index.js")).href
  )) as CardModule;
}, 120_000);

afterEach(cleanup);

const bundle = () => readFileSync(join(outDir, "index.js"), "utf8");

describe("the built review card", () => {
  it("imports only React, ReactDOM and the JSON Schema validator: no Next.js, no app code", () => {
    const js = bundle();
    const specifiers = new Set(
      [
        ...js.matchAll(/(?:^|[\s;])(?:import|export)\s*(?:[^"';]*?\sfrom\s*)?["']([^"']+)["']/g),
      ].map((match) => match[1]!),
    );
    for (const dynamic of js.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
      specifiers.add(dynamic[1]!);
    }
    expect([...specifiers].sort()).toEqual([
      "@cfworker/json-schema",
      "react",
      "react-dom",
      "react/jsx-runtime",
    ]);
    expect(js).not.toMatch(/["']next[/"']/);
    expect(js).not.toContain("process.env");
    // One client boundary for the whole bundle, so a Next.js host may use it from a server file.
    expect(js.startsWith('"use client";')).toBe(true);
  });

  it("renders the host's batch and hands an approval to the host's callback", async () => {
    const batch = makeBatch();
    const onDecide = vi.fn(async (req: DecisionRequest): Promise<DecisionResult> => ({
      ok: true,
      batch: decided(
        batch,
        decision({ by: dana, scope: req.outcome === "approve" ? req.scope : "once" }),
      ),
    }));
    render(<card.ReviewCard batch={batch} viewer={dana} onDecide={onDecide} now={clock} />);
    const article = screen.getByRole("article", { name: "Refund order A-1" });
    expect(article.getAttribute("data-status")).toBe("pending");

    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Approve refund_order" }));
    });
    expect(onDecide).toHaveBeenCalledExactlyOnceWith({
      callId: "call-1",
      outcome: "approve",
      expectedRevision: 1,
      scope: "once",
    });
    expect(article.getAttribute("data-status")).toBe("decided");
    expect(screen.getByTestId("decision-notice").textContent).toContain("Approved by you, 4 s ago");
    expect(screen.queryByRole("button", { name: "Approve refund_order" })).toBeNull();
  });

  it("sends a rejection with its reason, and shows the host's conflict answer", async () => {
    const batch = makeBatch();
    const current = decided(batch, decision({ by: { id: "u-sam", name: "Sam" } }));
    const onDecide = vi.fn(async (): Promise<DecisionResult> => ({
      ok: false,
      code: "already_decided",
      message: "Approved by Sam 4 s ago.",
      current,
    }));
    render(<card.ReviewCard batch={batch} viewer={dana} onDecide={onDecide} now={clock} />);
    fireEvent.click(screen.getByRole("button", { name: "Reject refund_order" }));
    fireEvent.change(screen.getByTestId("reject-reason"), { target: { value: "Wrong order" } });
    await act(async () => {
      fireEvent.click(screen.getByTestId("confirm-reject"));
    });
    expect(onDecide).toHaveBeenCalledWith({
      callId: "call-1",
      outcome: "reject",
      expectedRevision: 1,
      reason: "Wrong order",
    });
    expect(screen.getByTestId("race-sentence").textContent).toBe(
      "Your rejection was not recorded: Sam approved it 4 s ago.",
    );
    // the reason typed is kept, copyable
    expect((screen.getByTestId("unsent-draft-text") as HTMLTextAreaElement).value).toBe(
      "Wrong order",
    );
  });

  it("checks an edit against the call's JSON Schema with the package's validator", () => {
    const inputSchema = {
      type: "object",
      properties: { orderId: { type: "string" }, amount: { type: "number", maximum: 100 } },
      required: ["orderId", "amount"],
    };
    const batch = makeBatch({ calls: [makeCall({ inputSchema })] });
    render(
      <card.ReviewCard
        batch={batch}
        viewer={dana}
        onDecide={async () => ({ ok: true, batch })}
        now={clock}
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: "Edit refund_order" }));
    fireEvent.change(screen.getByTestId("args-editor"), {
      target: { value: '{ "orderId": "A-1", "amount": 500 }' },
    });
    expect(screen.getByTestId("editor-error").textContent).toContain("amount must be <= 100");
  });

  it("without callbacks is read-only", () => {
    render(<card.ReviewCard batch={makeBatch()} now={clock} />);
    expect(screen.getByTestId("review-card")).toBeTruthy();
    expect(screen.queryByRole("button", { name: /Approve|Reject/ })).toBeNull();
  });

  it("ships a stylesheet that styles every class the card renders", () => {
    render(
      <card.ReviewCard
        batch={makeBatch()}
        viewer={dana}
        onDecide={async () => ({ ok: false, code: "x", message: "x" })}
        now={clock}
      />,
    );
    const css = readFileSync(join(outDir, "index.css"), "utf8");
    const used = new Set<string>();
    for (const element of document.querySelectorAll("[class]")) {
      for (const name of element.classList) used.add(name);
    }
    expect(used.size).toBeGreaterThan(5);
    const unstyled = [...used].filter((name) => !css.includes(`.${name}`));
    expect(unstyled).toEqual([]);
  });
});

describe("the stylesheet's theme", () => {
  it("reads no CSS variable of the host's but the --cs-* ones its README documents", () => {
    const css = readFileSync(join(outDir, "index.css"), "utf8");
    const defined = new Set([...css.matchAll(/(--[\w-]+)\s*:/g)].map((match) => match[1]!));
    const read = new Set([...css.matchAll(/var\(\s*(--[\w-]+)/g)].map((match) => match[1]!));
    // What the card reads without setting it itself comes from the host page.
    const fromHost = [...read].filter((name) => !defined.has(name)).sort();
    expect(fromHost.length).toBeGreaterThanOrEqual(8);
    expect(fromHost.filter((name) => !name.startsWith("--cs-"))).toEqual([]);
    const readme = readFileSync(join(sourceDir, "README.md"), "utf8");
    const documented = [...readme.matchAll(/^\| `(--cs-[\w-]+)`/gm)].map((match) => match[1]!);
    expect(documented.sort()).toEqual(fromHost);
  });
});

describe("the package entry", () => {
  // A host's project: its own folder whose node_modules holds the package (its folder here),
  // React and React's types, as `npm install` would leave it.
  let host: string;
  beforeAll(() => {
    host = mkdtempSync(join(tmpdir(), "countersign-host-"));
    writeFileSync(join(host, "package.json"), JSON.stringify({ type: "module", private: true }));
    const modules = join(host, "node_modules");
    mkdirSync(join(modules, "@types"), { recursive: true });
    mkdirSync(join(modules, "@countersign"));
    mkdirSync(join(modules, "@cfworker"));
    symlinkSync(sourceDir, join(modules, "@countersign/review-card"));
    for (const name of [
      "react",
      "react-dom",
      "@types/react",
      "@types/react-dom",
      "@cfworker/json-schema",
    ]) {
      symlinkSync(join(root, "node_modules", name), join(modules, name));
    }
    writeFileSync(
      join(host, "app.tsx"),
      [
        "import {",
        "  ReviewCard,",
        "  useBatch,",
        "  type Batch,",
        "  type DecisionResult,",
        "  type LiveStatus,",
        '} from "@countersign/review-card";',
        "export function LiveStatusText({ id }: { id: string }): LiveStatus {",
        '  const { batch, status } = useBatch(id, { baseUrl: "/countersign", pollIntervalMs: 2000 });',
        '  const pending: boolean | undefined = batch?.calls.some((call) => call.status === "pending");',
        '  return pending === false ? "settled" : status;',
        "}",
        "export function HostApp({ batch }: { batch: Batch }) {",
        "  return (",
        "    <ReviewCard",
        "      batch={batch}",
        '      viewer={{ id: "u-1", name: "Host user" }}',
        "      onDecide={async (req): Promise<DecisionResult> => {",
        '        if (req.outcome === "reject") console.log(req.reason);',
        '        return { ok: false, code: "not_pending", message: "later" };',
        "      }}",
        "    />",
        "  );",
        "}",
      ].join("\n"),
    );
    // The package README's quick start, as a host pastes it.
    const readme = readFileSync(join(sourceDir, "README.md"), "utf8");
    const quickStart = /## Quick start\n\n```tsx\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quickStart).toBeDefined();
    writeFileSync(join(host, "quick-start.tsx"), quickStart!);
    writeFileSync(
      join(host, "server-render.mjs"),
      [
        'import { createElement } from "react";',
        'import { renderToStaticMarkup } from "react-dom/server";',
        'import { ReviewCard } from "@countersign/review-card";',
        "const batch = JSON.parse(process.argv[2]);",
        "process.stdout.write(renderToStaticMarkup(createElement(ReviewCard, { batch })));",
      ].join("\n"),
    );
  });
  afterAll(() => rmSync(host, { recursive: true, force: true }));

  it.each([
    ["bundler", ts.ModuleKind.ESNext, ts.ModuleResolutionKind.Bundler],
    ["nodenext", ts.ModuleKind.NodeNext, ts.ModuleResolutionKind.NodeNext],
  ])(
    "type-checks a host's use of it and the README's quick start (moduleResolution %s)",
    (_name, module, moduleResolution) => {
      const program = ts.createProgram([join(host, "app.tsx"), join(host, "quick-start.tsx")], {
        module,
        moduleResolution,
        target: ts.ScriptTarget.ES2022,
        jsx: ts.JsxEmit.ReactJSX,
        strict: true,
        noEmit: true,
        types: [],
      });
      // The host's file and the package's declarations (an unresolved import in those would
      // otherwise quietly become `any`); React's own types are not checked again.
      const checked = program
        .getSourceFiles()
        .filter((file) => file.fileName.startsWith(host) || file.fileName.startsWith(outDir));
      expect(checked.length).toBeGreaterThan(5);
      const problems = [
        ...program.getOptionsDiagnostics(),
        ...program.getGlobalDiagnostics(),
        ...checked.flatMap((file) => [
          ...program.getSyntacticDiagnostics(file),
          ...program.getSemanticDiagnostics(file),
        ]),
      ].map(
        (d) => `${d.file?.fileName ?? ""} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
      );
      expect(problems).toEqual([]);
    },
  );

  it("renders in plain Node, resolved by its package name", () => {
    const html = execFileSync(
      process.execPath,
      ["server-render.mjs", JSON.stringify(makeBatch())],
      { cwd: host, encoding: "utf8" },
    );
    expect(html).toContain('data-testid="review-card"');
    expect(html).toContain("Refund order A-1");
  });
});
