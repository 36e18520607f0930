import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CHROMIUM_ARGS, chromiumPath } from "@/e2e/support/chromium";
import { chromium, devices, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { getDb } from "@/db/client";
import { batches, calls, runs } from "@/db/schema";
import {
  createAgentKey,
  createQueue,
  createReviewer,
  createReviewerToken,
} from "@/lib/admin/admin-verbs";
import { newId } from "@/lib/ids";
import {
  cpuMeter,
  keepAliveAgent,
  now,
  openLoop,
  parseJson,
  percentile,
  request,
  sleep,
  type CpuShare,
  type Endpoint,
  type HttpResult,
} from "./load";
import { pauseBody, templateRows, type RunResponse, type Target } from "./targets";

// The reviewer's side, in real Chromium (Countersign only: there is no browser floor).
//  1. pause → card painted: a signed-in reviewer has /queue open; each pause's 201 is timed in
//     this process and the card's first paint in the page, on the same machine clock.
//  2. a 10,000-card queue: first render of a fresh page (first card painted, interactive, the
//     snapshot), scrolling through it, and pause → card painted again with those cards loaded.
// The page is instrumented by an init script (installProbe below); the app is not changed.

const log = (message: string) => console.error(message);
/** this process's clock, as Unix ms (the page reports `performance.timeOrigin + now()` too) */
const wallNow = () => performance.timeOrigin + performance.now();

export type BrowserConfig = {
  pauses: { warmup: number; count: number; rate: number };
  queue: { cards: number; renders: number; scrollCards: number; cardsPerFrame: number };
  /** pause → paint again, with the big queue loaded */
  pausesWithQueue: number;
};

export const browserConfig = (quick: boolean): BrowserConfig =>
  quick
    ? {
        pauses: { warmup: 5, count: 60, rate: 8 },
        queue: { cards: 2_000, renders: 3, scrollCards: 500, cardsPerFrame: 2 },
        pausesWithQueue: 30,
      }
    : {
        pauses: { warmup: 10, count: 200, rate: 8 },
        queue: { cards: 10_000, renders: 5, scrollCards: 2_000, cardsPerFrame: 2 },
        pausesWithQueue: 100,
      };

export type Stats = { n: number; p50: number; p95: number; p99: number; max: number };

function stats(samples: number[]): Stats {
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
    max: samples.length ? Math.max(...samples) : NaN,
  };
}

export type PaintResult = {
  sent: number;
  painted: number;
  statuses: Record<string, number>;
  /** ack (201 received here) → card painted in the page */
  latency: Stats;
  /** the same path in three legs: ack → SSE message in the page → card in the DOM → painted */
  toMessage: Stats;
  toDom: Stats;
  toPaint: Stats;
  cardsInQueue: number;
  longTasks: { count: number; totalMs: number; maxMs: number };
  cpu: CpuShare;
};

export type RenderResult = {
  firstCardPainted: number;
  interactive: number;
  /** Σ (long task − 50 ms) from first contentful paint to interactive */
  blockingMs: number;
  longTasks: number;
  longestTaskMs: number;
  fcp: number;
  /** the snapshot request as the page saw it (Resource Timing), ms since navigation start */
  snapshot?: { start: number; responseStart: number; end: number; bytes: number };
  /** `j` pressed after interactive → the selected card painted */
  keyToPaint: number;
  heapMb: number;
  cardsInDom: number;
  pendingText: string;
  /** every card of the snapshot loaded (the count no longer says "loaded…"), since navigation */
  allLoaded: number;
};

export type ScrollResult = {
  cards: number;
  pxPerFrame: number;
  frames: number;
  nominalFrameMs: number;
  frameMs: Stats;
  dropped: number;
  /** frames where no card covered any of three points down the middle of the viewport */
  blank: number;
  longTasks: number;
  durationMs: number;
};

export type BrowserResult = {
  config: BrowserConfig;
  chromium: string;
  /** page clock − this process's clock, measured and corrected for */
  clockOffsetMs: number;
  clockUncertaintyMs: number;
  pause: PaintResult;
  seeding: { cards: number; ms: number };
  snapshotHttp: { ms: number[]; bytes: number; allMs: number; pages: number };
  renders: RenderResult[];
  /** machine CPU shares over the first renders and over the scroll */
  renderCpu: CpuShare;
  scrollCpu?: CpuShare;
  scroll?: ScrollResult;
  pauseWithQueue?: PaintResult;
  /** with --profile: CPU profiles of the page's main thread */
  profiles: string[];
};

/* ------------------------------------------------------------------ the browser */

const browsers = new Set<Browser>();

/** Closes every browser this module launched (run.ts calls it on error and Ctrl-C too). */
export async function closeBrowsers(): Promise<void> {
  await Promise.all([...browsers].map((b) => b.close().catch(() => undefined)));
  browsers.clear();
}

async function launch(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: CHROMIUM_ARGS,
    // run.ts owns the signals: it stops the servers and then calls closeBrowsers()
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  browsers.add(browser);
  return browser;
}

/* ------------------------------------------------------------------ the in-page probe */

const CARD = '[data-testid="review-card"][data-batch-id]';

type CardTimes = { received?: number; inserted?: number; painted?: number };
type Probe = {
  cards: Record<string, CardTimes>;
  firstCard: { inserted?: number; painted?: number };
  longTasks: { start: number; end: number }[];
  keyAt?: number;
  selectedPainted?: number;
  scroll: (options: { cards: number; cardsPerFrame: number }) => Promise<RawScroll>;
};
type RawScroll = {
  stride: number;
  idle: number[];
  frames: number[];
  blank: number;
  longTasks: number;
  durationMs: number;
};
type BenchWindow = { __bench: Probe };

/**
 * Runs in the page before its own scripts (an init script), so it sees every card from the
 * first. Times are the page's `performance.now()`. "Painted" is approximated as a
 * requestAnimationFrame and then a task after the frame that first holds the element: the frame
 * has been produced by then.
 */
function installProbe(cardSelector: string) {
  const probe: Probe = {
    cards: {},
    firstCard: {},
    longTasks: [],
    scroll: async () => {
      throw new Error("not ready");
    },
  };
  (window as unknown as BenchWindow).__bench = probe;
  const afterPaint = (then: (at: number) => void) =>
    requestAnimationFrame(() => setTimeout(() => then(performance.now()), 0));

  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        probe.longTasks.push({ start: e.startTime, end: e.startTime + e.duration });
    }).observe({ type: "longtask", buffered: true });
  } catch {
    // no Long Tasks API: blocking time reads 0
  }

  // The first listener on every EventSource, so it runs before the app's own.
  const NativeEventSource = window.EventSource;
  window.EventSource = class extends NativeEventSource {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      this.addEventListener("batch.created", (event) => {
        const at = performance.now();
        try {
          const id = (JSON.parse((event as MessageEvent<string>).data) as { batchId?: string })
            .batchId;
          if (id) (probe.cards[id] ??= {}).received ??= at;
        } catch {
          // not ours to judge
        }
      });
    }
  };

  document.addEventListener("keydown", (event) => (probe.keyAt = event.timeStamp), true);

  new MutationObserver((records) => {
    const at = performance.now();
    const fresh: CardTimes[] = [];
    let selected = false;
    for (const record of records) {
      if (record.type === "attributes") {
        selected ||= (record.target as Element).hasAttribute("data-selected");
        continue;
      }
      for (const node of record.addedNodes) {
        if (!(node instanceof Element)) continue;
        const found = node.matches(cardSelector) ? [node] : node.querySelectorAll(cardSelector);
        for (const card of found) {
          const times = (probe.cards[card.getAttribute("data-batch-id")!] ??= {});
          if (times.inserted !== undefined) continue;
          times.inserted = at;
          fresh.push(times);
        }
      }
    }
    if (fresh.length) {
      probe.firstCard.inserted ??= at;
      afterPaint((painted) => {
        for (const times of fresh) times.painted = painted;
        probe.firstCard.painted ??= painted;
      });
    }
    if (selected && probe.keyAt !== undefined && probe.selectedPainted === undefined)
      afterPaint((painted) => (probe.selectedPainted = painted));
  }).observe(document, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["data-selected"],
  });

  // Scrolls the window `cards` cards' worth, `cardsPerFrame` per animation frame, recording each
  // frame's start time and whether a card covers the middle of the viewport as it is drawn.
  probe.scroll = async ({ cards, cardsPerFrame }) => {
    const list = document.querySelector<HTMLElement>('[data-testid="queue-list"]')!;
    const total = Number(list.getAttribute("aria-label")!.split(" ")[0]); // "10000 cards"
    const stride = list.getBoundingClientRect().height / total;
    const step = stride * cardsPerFrame;
    const frame = () => new Promise<number>((resolve) => requestAnimationFrame(resolve));
    const covered = () =>
      [0.25, 0.5, 0.75].some((y) =>
        document
          .elementFromPoint(window.innerWidth / 2, window.innerHeight * y)
          ?.closest(cardSelector),
      );
    const idle: number[] = [];
    let previous = await frame();
    for (let i = 0; i < 30; i++) {
      const t = await frame();
      idle.push(t - previous);
      previous = t;
    }
    const longBefore = probe.longTasks.length;
    const frames: number[] = [];
    let blank = 0;
    const started = performance.now();
    previous = await frame();
    for (let scrolled = 0; scrolled < stride * cards; scrolled += step) {
      window.scrollBy(0, step);
      // what this frame will draw: the new scroll position over the DOM as it stands
      if (!covered()) blank++;
      const t = await frame();
      frames.push(t - previous);
      previous = t;
    }
    const durationMs = performance.now() - started;
    await frame();
    return {
      stride,
      idle,
      frames,
      blank,
      longTasks: probe.longTasks.length - longBefore,
      durationMs,
    };
  };
}

async function openPage(
  browser: Browser,
  baseURL: string,
  storageState?: Awaited<ReturnType<BrowserContext["storageState"]>>,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ ...devices["Desktop Chrome"], baseURL, storageState });
  // tsx names inner functions with an `__name` helper that the page does not have
  await context.addInitScript({
    content: `(() => { const __name = (f) => f; (${String(installProbe)})(${JSON.stringify(CARD)}); })();`,
  });
  return { context, page: await context.newPage() };
}

/* ------------------------------------------------------------------ the team and the seed */

type Team = { queueName: string; email: string; password: string; agentKey: string; token: string };

/** A queue of its own, so the other scenarios' cards never show on this reviewer's page. */
async function makeBrowserTeam(): Promise<Team> {
  const suffix = randomUUID().slice(0, 8);
  const queueName = `browser-bench-${suffix}`;
  const password = `bench-${randomUUID()}`;
  await createQueue({ name: queueName });
  const reviewer = await createReviewer({
    email: `browser-bench-${suffix}@example.com`,
    name: "Bench Reviewer",
    password,
    queues: [{ name: queueName }],
  });
  const agent = await createAgentKey({ name: "Bench agent", queues: [queueName] });
  return {
    queueName,
    email: reviewer.email,
    password,
    agentKey: agent.key,
    token: await createReviewerToken(reviewer.email),
  };
}

/**
 * `n` pending one-call batches in the team's queue without `n` API round trips: one pause through
 * the API as the template, then copies of its run, batch and call rows (new ids, deadlines a
 * second apart, every other column as the real code wrote it) inserted straight into the
 * server's database file, like targets.ts does for the decision benchmark.
 */
async function seedQueue(endpoint: Endpoint, agentKey: string, n: number): Promise<void> {
  const agent = keepAliveAgent(1);
  let template: RunResponse;
  try {
    const body = pauseBody("browser-seed-template");
    template = parseJson<RunResponse>(
      await request(endpoint, agent, {
        method: "POST",
        path: "/api/v1/runs",
        token: agentKey,
        // later than every benchmark pause, so the measured cards still sort first
        body: { ...body, batch: { ...body.batch, timeoutSecs: 6 * 24 * 3600 } },
      }),
      "the seed template pause",
    );
  } finally {
    agent.destroy();
  }
  const db = getDb();
  const { run, batch, call } = await templateRows(template);
  const CHUNK = 250;
  await db.transaction(
    async (tx) => {
      for (let done = 0; done < n - 1; done += CHUNK) {
        const runRows: (typeof runs.$inferInsert)[] = [];
        const batchRows: (typeof batches.$inferInsert)[] = [];
        const callRows: (typeof calls.$inferInsert)[] = [];
        for (let i = done; i < Math.min(n - 1, done + CHUNK); i++) {
          const ids = { run: newId(), batch: newId(), call: newId() };
          const toolCallId = `browser-seed-${i}`;
          runRows.push({ ...run, id: ids.run, externalId: toolCallId });
          batchRows.push({
            ...batch,
            id: ids.batch,
            runId: ids.run,
            expiresAt: batch.expiresAt + (i + 1) * 1000,
          });
          callRows.push({ ...call, id: ids.call, batchId: ids.batch, runId: ids.run, toolCallId });
        }
        await tx.insert(runs).values(runRows);
        await tx.insert(batches).values(batchRows);
        await tx.insert(calls).values(callRows);
      }
    },
    { behavior: "immediate" },
  );
}

/* ------------------------------------------------------------------ measurements */

type Pauser = {
  /** sends `count` pauses at `rate`/s (plus `warmup` unmeasured first) and times their cards */
  run: (
    page: Page,
    options: { warmup: number; count: number; rate: number; cardsInQueue: number },
  ) => Promise<PaintResult>;
};

/**
 * Every pause's deadline is 2 s before the previous one's (and ~10 h out, before anything
 * seeded), so the new card sorts first in the soonest-deadline-first list and is rendered in the
 * window's top rows. Timeouts are whole seconds, hence the 2 s steps.
 */
function pauser(target: Target, team: Team, clockOffset: () => number): Pauser {
  let sequence = 0;
  const firstDeadline = Date.now() + 36_000_000;
  const label = `browser-${Date.now().toString(36)}`;
  return {
    run: async (page, options) => {
      await page.evaluate(() => window.scrollTo(0, 0));
      await sleep(500);
      const agent = keepAliveAgent(64);
      const ackAt = new Map<string, number>(); // batch id → Unix ms, measured pauses only
      const results: Promise<HttpResult>[] = [];
      const total = options.warmup + options.count;
      const pageStart = await page.evaluate(() => performance.now());
      let cpu = cpuMeter(target.pid);
      try {
        await openLoop(options.rate, total, (i) => {
          if (i === options.warmup) cpu = cpuMeter(target.pid);
          const token = `${label}-${sequence}`;
          const body = pauseBody(token);
          const result = request(target.endpoint, agent, {
            method: "POST",
            path: "/api/v1/runs",
            token: team.agentKey,
            body: {
              ...body,
              batch: {
                ...body.batch,
                timeoutSecs: Math.floor((firstDeadline - 2000 * sequence++ - Date.now()) / 1000),
              },
            },
          });
          results.push(result);
          if (i >= options.warmup)
            void result.then((r) => {
              if (r.status !== 201) return;
              const run = JSON.parse(r.text) as RunResponse;
              ackAt.set(run.batches[0]!.id, performance.timeOrigin + r.doneAt);
            });
        });
        const settled = await Promise.all(results);
        const ids = [...ackAt.keys()];
        const deadline = now() + 10_000;
        while (now() < deadline) {
          const painted = await page.evaluate(
            (ids) =>
              ids.filter(
                (id) => (window as unknown as BenchWindow).__bench.cards[id]?.painted !== undefined,
              ).length,
            ids,
          );
          if (painted === ids.length) break;
          await sleep(100);
        }
        const usage = cpu();
        const seen = await page.evaluate(
          ({ ids, from }) => ({
            origin: performance.timeOrigin,
            cards: ids.map((id) => (window as unknown as BenchWindow).__bench.cards[id] ?? {}),
            longTasks: (window as unknown as BenchWindow).__bench.longTasks.filter(
              (t) => t.start >= from,
            ),
          }),
          { ids, from: pageStart },
        );
        const offset = clockOffset();
        const toLocal = (t: number | undefined) =>
          t === undefined ? undefined : seen.origin + t - offset;
        const latency: number[] = [];
        const toMessage: number[] = [];
        const toDom: number[] = [];
        const toPaint: number[] = [];
        ids.forEach((id, i) => {
          const ack = ackAt.get(id)!;
          const card = seen.cards[i]!;
          const [received, inserted, painted] = [card.received, card.inserted, card.painted].map(
            toLocal,
          );
          if (painted !== undefined) latency.push(painted - ack);
          if (received !== undefined) toMessage.push(received - ack);
          if (received !== undefined && inserted !== undefined) toDom.push(inserted - received);
          if (inserted !== undefined && painted !== undefined) toPaint.push(painted - inserted);
        });
        const statuses: Record<string, number> = {};
        for (const r of settled.slice(options.warmup)) {
          const key = r.status === 0 ? `error(${r.error ?? "?"})` : String(r.status);
          statuses[key] = (statuses[key] ?? 0) + 1;
        }
        const durations = seen.longTasks.map((t) => t.end - t.start);
        return {
          sent: options.count,
          painted: latency.length,
          statuses,
          latency: stats(latency),
          toMessage: stats(toMessage),
          toDom: stats(toDom),
          toPaint: stats(toPaint),
          cardsInQueue: options.cardsInQueue,
          longTasks: {
            count: durations.length,
            totalMs: durations.reduce((a, b) => a + b, 0),
            maxMs: durations.length ? Math.max(...durations) : 0,
          },
          cpu: usage,
        };
      } finally {
        agent.destroy();
      }
    },
  };
}

/** Page clock − this process's clock: the evaluate round trip with the smallest delay wins. */
async function measureClockOffset(page: Page): Promise<{ offset: number; uncertainty: number }> {
  let best = { offset: 0, uncertainty: Infinity };
  for (let i = 0; i < 25; i++) {
    const before = wallNow();
    const pageAt = await page.evaluate(() => performance.timeOrigin + performance.now());
    const after = wallNow();
    if ((after - before) / 2 < best.uncertainty)
      best = { offset: pageAt - (before + after) / 2, uncertainty: (after - before) / 2 };
  }
  return best;
}

/**
 * Interactive: the end of the last long task (≥ 50 ms) before the first 500 ms without one that
 * starts at or after the first card's paint (time-to-interactive's rule, with a 500 ms window).
 */
const QUIET_MS = 500;
function interactiveAt(firstCardPainted: number, longTasks: { start: number; end: number }[]) {
  let at = firstCardPainted;
  for (const task of [...longTasks].sort((a, b) => a.start - b.start)) {
    if (task.end <= at) continue;
    if (task.start - at >= QUIET_MS) break;
    at = Math.max(at, task.end);
  }
  return at;
}

async function firstRender(
  browser: Browser,
  baseURL: string,
  storageState: Awaited<ReturnType<BrowserContext["storageState"]>>,
): Promise<{ result: RenderResult; context: BrowserContext; page: Page }> {
  const { context, page } = await openPage(browser, baseURL, storageState);
  await page.goto("/queue", { waitUntil: "commit" });
  const deadline = now() + 60_000;
  for (;;) {
    const state = await page.evaluate(() => ({
      now: performance.now(),
      painted: (window as unknown as BenchWindow).__bench.firstCard.painted,
      longTasks: (window as unknown as BenchWindow).__bench.longTasks,
    }));
    if (
      state.painted !== undefined &&
      interactiveAt(state.painted, state.longTasks) + QUIET_MS <= state.now
    )
      break;
    if (now() > deadline) throw new Error("The queue page did not settle within 60 s.");
    await sleep(50);
  }
  await page.waitForFunction(
    () =>
      /^[\d,]+ pending$/.test(
        document.querySelector('[data-testid="pending-count"]')?.textContent ?? "",
      ),
    undefined,
    { timeout: 60_000, polling: 20 },
  );
  const allLoaded = await page.evaluate(() => performance.now());
  await page.keyboard.press("j");
  await page.waitForFunction(
    () => (window as unknown as BenchWindow).__bench.selectedPainted !== undefined,
    undefined,
    {
      timeout: 10_000,
    },
  );
  const seen = await page.evaluate((cardSelector) => {
    const probe = (window as unknown as BenchWindow).__bench;
    const pages = performance
      .getEntriesByType("resource")
      .filter((e) => e.name.includes("/api/v1/queue/snapshot")) as PerformanceResourceTiming[];
    const snapshot = pages.length
      ? {
          startTime: Math.min(...pages.map((p) => p.startTime)),
          responseStart: Math.min(...pages.map((p) => p.responseStart)),
          responseEnd: Math.max(...pages.map((p) => p.responseEnd)),
          encodedBodySize: pages.reduce((sum, p) => sum + p.encodedBodySize, 0),
        }
      : undefined;
    return {
      firstCardPainted: probe.firstCard.painted!,
      longTasks: probe.longTasks,
      fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN,
      snapshot: snapshot && {
        start: snapshot.startTime,
        responseStart: snapshot.responseStart,
        end: snapshot.responseEnd,
        bytes: snapshot.encodedBodySize,
      },
      keyToPaint: probe.selectedPainted! - probe.keyAt!,
      heap:
        (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory
          ?.usedJSHeapSize ?? NaN,
      cardsInDom: document.querySelectorAll(cardSelector).length,
      pendingText: document.querySelector('[data-testid="pending-count"]')?.textContent ?? "",
    };
  }, CARD);
  const interactive = interactiveAt(seen.firstCardPainted, seen.longTasks);
  const loading = seen.longTasks.filter((t) => t.start < interactive);
  return {
    context,
    page,
    result: {
      firstCardPainted: seen.firstCardPainted,
      interactive,
      blockingMs: loading
        .filter((t) => t.start >= seen.fcp)
        .reduce((sum, t) => sum + Math.max(0, t.end - t.start - 50), 0),
      longTasks: loading.length,
      longestTaskMs: Math.max(0, ...loading.map((t) => t.end - t.start)),
      fcp: seen.fcp,
      snapshot: seen.snapshot,
      keyToPaint: seen.keyToPaint,
      heapMb: seen.heap / 2 ** 20,
      cardsInDom: seen.cardsInDom,
      pendingText: seen.pendingText,
      allLoaded,
    },
  };
}

async function scrollThrough(
  page: Page,
  options: { cards: number; cardsPerFrame: number },
): Promise<ScrollResult> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await sleep(300);
  const raw = await page.evaluate(
    (o) => (window as unknown as BenchWindow).__bench.scroll(o),
    options,
  );
  const sorted = [...raw.idle].sort((a, b) => a - b);
  const nominal = sorted[Math.floor(sorted.length / 2)] ?? 1000 / 60;
  return {
    cards: options.cards,
    pxPerFrame: raw.stride * options.cardsPerFrame,
    frames: raw.frames.length,
    nominalFrameMs: nominal,
    frameMs: stats(raw.frames),
    dropped: raw.frames.reduce((sum, f) => sum + Math.max(0, Math.round(f / nominal) - 1), 0),
    blank: raw.blank,
    longTasks: raw.longTasks,
    durationMs: raw.durationMs,
  };
}

/**
 * With --profile: a CPU profile of the page's main thread around `work` (the production bundle is
 * minified: read it with profile-summary.ts for the chunk and column, then the chunk's source).
 */
async function profiled<T>(page: Page, file: string | undefined, work: () => Promise<T>) {
  if (!file) return work();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = await cdp.send("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    await cdp.detach();
  }
}

/* ------------------------------------------------------------------ the scenario */

export async function browserScenario(
  target: Target,
  config: BrowserConfig,
  options: { profileDir?: string } = {},
): Promise<BrowserResult> {
  const profileFile = (name: string) =>
    options.profileDir && join(options.profileDir, `page-${name}-${Date.now()}.cpuprofile`);
  const profiles: string[] = [];
  if (target.name !== "Countersign") throw new Error("The browser scenario runs on Countersign.");
  const baseURL = `http://${target.endpoint.host}:${target.endpoint.port}`;
  const team = await makeBrowserTeam();
  const browser = await launch();
  const contexts: BrowserContext[] = [];
  try {
    log(`  Countersign: browser: Chromium ${browser.version()}; signing in…`);
    const live = await openPage(browser, baseURL);
    contexts.push(live.context);
    await live.page.goto("/sign-in");
    await live.page.getByLabel("Email").fill(team.email);
    await live.page.getByLabel("Password").fill(team.password);
    await live.page.getByRole("button", { name: "Sign in" }).click();
    await live.page.waitForURL("**/queue");
    await live.page.waitForSelector('[data-testid="connection"][data-state="live"]');
    const storageState = await live.context.storageState();
    const clock = await measureClockOffset(live.page);
    const pauses = pauser(target, team, () => clock.offset);

    const { warmup, count, rate } = config.pauses;
    log(`  Countersign: browser: ${warmup} + ${count} pauses at ${rate}/s → card painted…`);
    const pause = await pauses.run(live.page, {
      warmup,
      count,
      rate,
      cardsInQueue: warmup + count,
    });
    await live.context.close();

    const cards = config.queue.cards;
    const already = warmup + count;
    log(`  Countersign: browser: seeding the queue to ${cards.toLocaleString("en-US")} cards…`);
    const seedStart = now();
    await seedQueue(target.endpoint, team.agentKey, cards - already);
    const seeding = { cards: cards - already, ms: now() - seedStart };

    const agent = keepAliveAgent(1);
    // The page renders the first 100 cards with its HTML and pages the rest in the background.
    const snapshotHttp = { ms: [] as number[], bytes: 0, allMs: NaN, pages: 0 };
    try {
      for (let i = 0; i < 3; i++) {
        const r = await request(target.endpoint, agent, {
          method: "GET",
          path: "/api/v1/queue/snapshot?limit=100",
          token: team.token,
        });
        const body = parseJson<{ batches: unknown[]; pendingTotal: number }>(
          r,
          "the queue snapshot",
          [200],
        );
        if (body.pendingTotal !== cards)
          throw new Error(`The snapshot counts ${body.pendingTotal} cards, not ${cards}.`);
        snapshotHttp.ms.push(r.doneAt - r.sentAt);
        snapshotHttp.bytes = Buffer.byteLength(r.text);
      }
      // The whole queue the way the page loads it: the first page, then pages of 2,000.
      const allStart = now();
      let cursor: string | null = null;
      let held = 0;
      do {
        const query: string = cursor
          ? `?limit=2000&cursor=${encodeURIComponent(cursor)}`
          : "?limit=100";
        const r = await request(target.endpoint, agent, {
          method: "GET",
          path: `/api/v1/queue/snapshot${query}`,
          token: team.token,
        });
        const body = parseJson<{ batches: unknown[]; nextCursor: string | null }>(
          r,
          "a snapshot page",
          [200],
        );
        held += body.batches.length;
        snapshotHttp.pages++;
        cursor = body.nextCursor;
      } while (cursor);
      snapshotHttp.allMs = now() - allStart;
      if (held !== cards) throw new Error(`The snapshot pages hold ${held} cards, not ${cards}.`);
    } finally {
      agent.destroy();
    }

    const renders: RenderResult[] = [];
    let last: { context: BrowserContext; page: Page } | undefined;
    const renderMeter = cpuMeter(target.pid);
    for (let i = 0; i < config.queue.renders; i++) {
      if (last) await last.context.close();
      const render = await firstRender(browser, baseURL, storageState);
      contexts.push(render.context);
      last = render;
      renders.push(render.result);
      log(
        `  Countersign: browser:   render ${i + 1}/${config.queue.renders}: first card ${render.result.firstCardPainted.toFixed(0)} ms, interactive ${render.result.interactive.toFixed(0)} ms`,
      );
    }

    const renderCpu = renderMeter();
    let scroll: ScrollResult | undefined;
    let scrollCpu: CpuShare | undefined;
    let pauseWithQueue: PaintResult | undefined;
    if (last) {
      log(`  Countersign: browser: scrolling ${config.queue.scrollCards} cards…`);
      const page = last.page;
      const scrollProfile = profileFile("scroll");
      const scrollMeter = cpuMeter(target.pid);
      scroll = await profiled(page, scrollProfile, () =>
        scrollThrough(page, {
          cards: config.queue.scrollCards,
          cardsPerFrame: config.queue.cardsPerFrame,
        }),
      );
      scrollCpu = scrollMeter();
      log(
        `  Countersign: browser: ${config.pausesWithQueue} pauses → card painted with ${cards} cards open…`,
      );
      const pausesProfile = profileFile("pauses");
      pauseWithQueue = await profiled(page, pausesProfile, () =>
        pauses.run(page, {
          warmup: 3,
          count: config.pausesWithQueue,
          rate,
          cardsInQueue: cards + 3 + config.pausesWithQueue,
        }),
      );
      for (const file of [scrollProfile, pausesProfile]) if (file) profiles.push(file);
    }
    return {
      config,
      chromium: browser.version(),
      clockOffsetMs: clock.offset,
      clockUncertaintyMs: clock.uncertainty,
      pause,
      seeding,
      snapshotHttp,
      renders,
      renderCpu,
      scroll,
      scrollCpu,
      pauseWithQueue,
      profiles,
    };
  } finally {
    for (const context of contexts) await context.close().catch(() => undefined);
    browsers.delete(browser);
    await browser.close().catch(() => undefined);
  }
}

/* ------------------------------------------------------------------ the report */

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const median = (xs: number[]) => percentile(xs, 50);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const verdict = (met: boolean) => (met ? " — met" : " — **missed**");
const medMax = (xs: number[], unit = " ms") =>
  xs.length ? `${ms(median(xs))} / ${ms(Math.max(...xs))}${unit}` : "–";
const four = (s: Stats) => `${ms(s.p50)} / ${ms(s.p95)} / ${ms(s.p99)} / ${ms(s.max)} ms`;
const two = (s: Stats) => `${ms(s.p50)} / ${ms(s.p99)} ms`;
const cpuShare = (c: CpuShare | undefined) =>
  !c || Number.isNaN(c.oursPct) ? "–" : `${c.oursPct.toFixed(0)}% / ${c.otherPct.toFixed(0)}%`;

/** A markdown section for the bench report (and the README); `context` lines end its notes. */
export function browserReport(r: BrowserResult, quick: boolean, context: string[]): string[] {
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`| ${cells.join(" | ")} |`);
  const { pauses, queue } = r.config;
  const cards = int(queue.cards);
  lines.push(
    `## Browser: the queue page in Chromium (Countersign only)${quick ? " (--quick: small queue, few pauses; not the real numbers)" : ""}`,
    "",
  );
  row(["measurement", "setting", "Countersign", "goal"]);
  row(["---", "---", "---:", "---"]);
  const paintRows = (p: PaintResult, setting: string) => {
    row([
      "pause acknowledged (201) → card painted, p50 / p95 / p99 / max",
      setting,
      `${four(p.latency)}${p.painted < p.sent ? ` (**${p.painted} of ${p.sent} painted**)` : ""}`,
      `p99 ≤ 100 ms${verdict(p.latency.p99 <= 100 && p.painted === p.sent)}`,
    ]);
    row([
      "↳ legs, p50 / p99: ack → SSE message in the page; → card in the DOM; → painted",
      "",
      `${two(p.toMessage)}; ${two(p.toDom)}; ${two(p.toPaint)}`,
      "",
    ]);
  };
  paintRows(
    r.pause,
    `${pauses.count} pauses at ${pauses.rate}/s, queue growing to ${int(r.pause.cardsInQueue)} cards`,
  );
  if (r.pauseWithQueue)
    paintRows(
      r.pauseWithQueue,
      `${r.pauseWithQueue.sent} pauses at ${pauses.rate}/s, ${cards}-card queue loaded`,
    );
  const renders = r.renders;
  const pick = (f: (x: RenderResult) => number) => renders.map(f);
  const interactive = pick((x) => x.interactive);
  row([
    `${cards}-card queue: navigation → first card painted, median / max`,
    `${renders.length} fresh pages`,
    medMax(pick((x) => x.firstCardPainted)),
    "",
  ]);
  row([
    `${cards}-card queue: navigation → interactive, median / max`,
    `${renders.length} fresh pages`,
    medMax(interactive),
    `≤ 1,500 ms (median)${interactive.length ? verdict(median(interactive) <= 1500) : ""}`,
  ]);
  row([
    "↳ total blocking time (FCP → interactive) / longest task, median",
    "",
    `${ms(median(pick((x) => x.blockingMs)))} / ${ms(median(pick((x) => x.longestTaskMs)))} ms`,
    "",
  ]);
  row([
    "↳ background pages in the page: first requested → last received (since navigation), median",
    "",
    `${ms(median(pick((x) => x.snapshot?.start ?? NaN)))} → ${ms(median(pick((x) => x.snapshot?.end ?? NaN)))} ms`,
    "",
  ]);
  row([
    "`j` after interactive → selected card painted, median / max",
    `${cards} cards`,
    medMax(pick((x) => x.keyToPaint)),
    "",
  ]);
  row([
    "`GET /api/v1/queue/snapshot?limit=100` (the first screenful) size; time first / median of 3",
    `${cards} cards, bench process, uncompressed`,
    `${mb(r.snapshotHttp.bytes)}; ${ms(r.snapshotHttp.ms[0] ?? NaN)} / ${ms(median(r.snapshotHttp.ms))} ms`,
    "",
  ]);
  row([
    "the whole snapshot, paged as the page loads it",
    `${r.snapshotHttp.pages} pages`,
    `${ms(r.snapshotHttp.allMs)} ms`,
    "",
  ]);
  row([
    "↳ in the page: navigation → every card loaded, median / max",
    `${cards} cards`,
    medMax(pick((x) => x.allLoaded)),
    "",
  ]);
  const s = r.scroll;
  if (s) {
    row([
      "scroll: frame time p50 / p95 / p99 / max",
      `${int(s.cards)} cards, ${s.pxPerFrame.toFixed(0)} px per frame`,
      four(s.frameMs),
      "",
    ]);
    row([
      "scroll: dropped frames / frames; blank frames; long tasks",
      `display frame ${ms(s.nominalFrameMs)} ms`,
      `${int(s.dropped)} / ${int(s.frames)} (${((100 * s.dropped) / (s.frames + s.dropped)).toFixed(0)}%); ${int(s.blank)}; ${int(s.longTasks)}`,
      "",
    ]);
  }
  row([
    "JS heap after interactive, median",
    `${cards} cards`,
    mb(median(pick((x) => x.heapMb * 2 ** 20))),
    "",
  ]);

  lines.push("", "### Browser details", "");
  row([
    "render",
    "FCP",
    "first card",
    "interactive",
    "blocking",
    "long tasks",
    "longest",
    "snapshot requested → received",
    "snapshot bytes",
    "`j` → painted",
    "heap",
    "cards in DOM",
    "count shown",
  ]);
  row([
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---:",
    "---",
  ]);
  renders.forEach((x, i) =>
    row([
      String(i + 1),
      `${ms(x.fcp)} ms`,
      `${ms(x.firstCardPainted)} ms`,
      `${ms(x.interactive)} ms`,
      `${ms(x.blockingMs)} ms`,
      String(x.longTasks),
      `${ms(x.longestTaskMs)} ms`,
      x.snapshot ? `${ms(x.snapshot.start)} → ${ms(x.snapshot.end)} ms` : "–",
      x.snapshot ? mb(x.snapshot.bytes) : "–",
      `${ms(x.keyToPaint)} ms`,
      `${x.heapMb.toFixed(0)} MB`,
      String(x.cardsInDom),
      x.pendingText,
    ]),
  );
  lines.push("");
  row([
    "pause run",
    "sent",
    "painted",
    "HTTP statuses",
    "long tasks: n / total / max",
    "CPU bench / other",
  ]);
  row(["---", "---:", "---:", "---", "---:", "---:"]);
  for (const [name, p] of [
    ["small queue", r.pause],
    [`${cards}-card queue`, r.pauseWithQueue],
  ] as const) {
    if (!p) continue;
    row([
      name,
      int(p.sent),
      int(p.painted),
      Object.entries(p.statuses)
        .map(([k, v]) => `${k}×${v}`)
        .join(", "),
      `${p.longTasks.count} / ${ms(p.longTasks.totalMs)} / ${ms(p.longTasks.maxMs)} ms`,
      cpuShare(p.cpu),
    ]);
  }
  lines.push(
    "",
    `CPU bench / other (shares of the whole machine): over the first renders ${cpuShare(r.renderCpu)}; over the scroll ${cpuShare(r.scrollCpu)}. "bench" is this process and everything it started (the server, Chromium); a large "other" means the machine was busy and every figure here is pessimistic.`,
  );

  lines.push(
    "",
    `- Chromium ${r.chromium} (headless, ${devices["Desktop Chrome"].viewport.width}×${devices["Desktop Chrome"].viewport.height}, --disable-gpu) driven by Playwright's library API from the bench process; the reviewer signs in through /sign-in; an init script instruments the page (the app is unchanged).`,
    `- Pause → card painted: the bench process sends \`POST /api/v1/runs\` (a one-call batch, agent key) at ${pauses.rate}/s, open loop, after ${pauses.warmup} uncounted warm-up pauses, and takes the time its 201 arrives. In the page a MutationObserver sees the \`[data-testid="review-card"][data-batch-id]\` element arrive; "painted" is the next requestAnimationFrame and then a setTimeout(0) (the frame holding the card has been produced). Both sides read \`performance.timeOrigin + performance.now()\`; the page's clock was ${ms(r.clockOffsetMs)} ms ± ${ms(r.clockUncertaintyMs)} ms off this process's (measured over evaluate round trips) and is corrected for. The legs: a first \`batch.created\` listener added to every EventSource by the init script timestamps the message.`,
    "- The list is virtualized and sorted soonest deadline first, so every pause's deadline is set 2 s before the previous one's (`timeoutSecs` ≈ 36,000 − 2·i − seconds elapsed; the seeded cards' are 6 days out): each new card sorts to the top of the list, and the page is scrolled to the top, so it lands in the rendered window.",
    `- The ${cards}-card queue: one pause through the API as a template, then ${int(r.seeding.cards)} copies of its run, batch and call rows (new ids, deadlines a second apart) inserted straight into the server's database file in one transaction (${ms(r.seeding.ms / 1000)} s); with the ${int(r.pause.cardsInQueue)} cards of the first run the reviewer's queue holds ${cards}.`,
    `- First render: a fresh browser context (signed-in cookies, empty cache) opens /queue; times are since navigation start. Interactive: the first card is painted and then the main thread goes ${QUIET_MS} ms without a long task (≥ 50 ms): the end of the last long task before that quiet window, or the first card's paint if none (time-to-interactive's rule with a ${QUIET_MS} ms window; Long Tasks API). Blocking time: Σ (task − 50 ms) over long tasks from first contentful paint to interactive. Then \`j\` is pressed and the selected card's repaint is timed (key event timestamp → painted).`,
    s
      ? `- Scroll: window.scrollBy of ${queue.cardsPerFrame} cards' height (${s.pxPerFrame.toFixed(0)} px) in each requestAnimationFrame, ${int(s.cards)} cards' worth (${ms(s.durationMs / 1000)} s), a fast fling; frame time is the gap between animation-frame timestamps, a dropped frame is each display frame (${ms(s.nominalFrameMs)} ms, measured idle) beyond the first in a gap; a blank frame is one where no card covers any of three points down the middle of the viewport as the frame is drawn.`
      : "- Scroll: not measured.",
    ...context,
  );
  if (r.profiles.length)
    lines.push(
      `- CPU profiles of the page (scroll; pauses with the ${cards}-card queue), taken while measuring: ${r.profiles.join(", ")}`,
    );
  return lines;
}
