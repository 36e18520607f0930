import { CountersignError, errorFromResponse } from "./errors.js";
import type { Transport } from "./http.js";
import { backoffMs, isRetryableStatus, sleep, type RetryPolicy } from "./retry.js";
import { readSse } from "./sse.js";
import type { Batch, RunEvent } from "./types.js";

// Waits for a batch to leave `pending`. The run's event stream is the fast path: it resumes with
// Last-Event-ID after any cut, so an event that happened while disconnected is replayed, not lost.
// When streaming does not work here (no streaming body, a proxy that refuses it, repeated failed
// connects) it falls back to long-polling GET /batches/{id}?wait=N. Either way the answer is the
// agent's own GET of the batch: reviewers' events omit calls a policy blocked.

export type WaitOptions = {
  signal?: AbortSignal;
  /** give up after this long: rejects with CountersignError `wait_timeout` (`current`: the batch) */
  timeoutMs?: number;
  /** the batch's run, when known: saves the first GET */
  runId?: string;
  /** `auto` (default): stream, falling back to long-polls; `stream` never falls back; `poll` never streams */
  mode?: "auto" | "stream" | "poll";
  /** every event of the run the stream delivers, as it arrives */
  onEvent?: (event: RunEvent) => void;
};

const SETTLING_EVENTS = new Set(["batch.decided", "batch.expired", "batch.cancelled"]);
/** failed connects in a row (no byte received) after which `auto` gives up on streaming */
const STREAM_FAILURES_BEFORE_FALLBACK = 4;
/** the server sends a comment every 15 s: three missed ones mean the connection is dead */
const STREAM_IDLE_MS = 45_000;
const LONG_POLL_SECS = 25;
/** the pause before reconnecting or polling again after a failure: these waits never give up */
const RECONNECT: RetryPolicy = { retries: Infinity, minDelayMs: 200, maxDelayMs: 5_000 };

type Fetcher = {
  transport: Transport;
  getBatch: (batchId: string, options: { wait?: number; signal?: AbortSignal }) => Promise<Batch>;
};

export async function waitForDecision(
  api: Fetcher,
  batchId: string,
  options: WaitOptions = {},
): Promise<Batch> {
  const controller = new AbortController();
  const state = { latest: null as Batch | null };
  const timeout = () =>
    new CountersignError({
      status: 0,
      code: "wait_timeout",
      message: `Batch ${batchId} was still pending after ${options.timeoutMs} ms.`,
      current: state.latest,
    });
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(timeout()), options.timeoutMs);
  const onAbort = () => controller.abort(options.signal!.reason);
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });

  const signal = controller.signal;
  const get = async (wait?: number) => {
    const batch = await api.getBatch(batchId, { wait, signal });
    state.latest = batch;
    return batch;
  };
  try {
    let runId = options.runId;
    if (runId === undefined) {
      const batch = await get();
      if (batch.status !== "pending") return batch;
      runId = batch.runId;
    }
    const mode = options.mode ?? "auto";
    if (mode !== "poll") {
      const streamed = await followStream(api.transport, runId, batchId, get, signal, options);
      if (streamed) return streamed;
      if (mode === "stream") throw streamUnavailable(runId);
    }
    return await longPoll(get, signal);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** The settled batch by the run's stream, or null when streaming does not work here. */
async function followStream(
  transport: Transport,
  runId: string,
  batchId: string,
  get: () => Promise<Batch>,
  signal: AbortSignal,
  options: WaitOptions,
): Promise<Batch | null> {
  let lastEventId: string | null = null;
  let failures = 0;
  for (;;) {
    const connection = new AbortController();
    const abort = () => connection.abort(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error("stream idle")), STREAM_IDLE_MS);
    };
    let receivedBytes = false;
    try {
      alive();
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (lastEventId !== null) headers["last-event-id"] = lastEventId;
      const response = await transport.open(`/runs/${encodeURIComponent(runId)}/stream`, {
        headers,
        signal: connection.signal,
      });
      if (!response.ok) {
        const text = await response.text().catch(() => "");
        // A refusal about the request itself (401, 403, 404…) would refuse a GET as well.
        if (!isRetryableStatus(response.status) && response.status < 500) {
          throw refusal(response.status, text);
        }
      } else if (!isEventStream(response)) {
        response.body?.cancel().catch(() => {});
        return null;
      } else {
        // Without a Last-Event-ID the stream only carries what happens after it opened: the first
        // bytes say it is listening, and a GET then covers whatever happened before.
        let confirmed = lastEventId !== null;
        const check = async () => {
          const batch = await get();
          return batch.status === "pending" ? null : batch;
        };
        for await (const messages of readSse(response.body!)) {
          receivedBytes = true;
          alive();
          if (!confirmed) {
            confirmed = true;
            const settled = await check();
            if (settled) return settled;
          }
          for (const message of messages) {
            if (message.event === "resync") {
              // The server no longer knows our id (a reset database): start over from the GET.
              lastEventId = null;
              const settled = await check();
              if (settled) return settled;
              continue;
            }
            if (message.id !== null) lastEventId = message.id;
            const event = parseEvent(message.data);
            if (event) options.onEvent?.(event);
            if (event && event.batchId === batchId && SETTLING_EVENTS.has(event.type)) {
              const settled = await check();
              if (settled) return settled;
            }
          }
        }
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof CountersignError && !isTransient(error)) throw error;
      // Otherwise a cut connection, a refused connect or a stalled stream: reconnect below.
    } finally {
      clearTimeout(idle);
      signal.removeEventListener("abort", abort);
      connection.abort();
    }
    failures = receivedBytes ? 0 : failures + 1;
    if (options.mode !== "stream" && failures >= STREAM_FAILURES_BEFORE_FALLBACK) return null;
    await sleep(backoffMs(RECONNECT, Math.max(failures, 1)), signal);
  }
}

/** GET ?wait=N until the batch settles; outages are waited out, not thrown. */
async function longPoll(
  get: (wait?: number) => Promise<Batch>,
  signal: AbortSignal,
): Promise<Batch> {
  for (let failures = 0; ;) {
    try {
      const batch = await get(LONG_POLL_SECS);
      if (batch.status !== "pending") return batch;
      failures = 0;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (!(error instanceof CountersignError) || !isTransient(error)) throw error;
      failures++;
      await sleep(backoffMs(RECONNECT, failures), signal);
    }
  }
}

function isTransient(error: CountersignError): boolean {
  return error.status === 0 || error.status >= 500 || isRetryableStatus(error.status);
}

function isEventStream(response: Response): boolean {
  const type = response.headers.get("content-type") ?? "";
  return (
    type.startsWith("text/event-stream") &&
    response.body !== null &&
    typeof response.body.getReader === "function"
  );
}

function parseEvent(data: string): RunEvent | null {
  try {
    const event = JSON.parse(data) as RunEvent;
    return typeof event === "object" && event !== null && typeof event.type === "string"
      ? event
      : null;
  } catch {
    return null;
  }
}

function refusal(status: number, text: string): CountersignError {
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return errorFromResponse(status, body, null);
}

function streamUnavailable(runId: string): CountersignError {
  return new CountersignError({
    status: 0,
    code: "network_error",
    message: `The event stream of run ${runId} is not available from this runtime.`,
  });
}
