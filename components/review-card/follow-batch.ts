import type { Batch } from "./types";

// One batch kept current from the Countersign API, outside React (useBatch wraps it): load the
// batch, follow its run's event stream (GET /api/v1/runs/{runId}/stream, which a reviewer may
// read for the queues they belong to) and reload the batch whenever an event names it. The stream
// is read with fetch, not EventSource, so a host can send a bearer token. A dropped stream is
// reopened with Last-Event-ID (the server replays what was missed); a stream that never gets
// through (a proxy that buffers or refuses event streams) gives way to polling. It stops by
// itself once the batch is settled: a decided, expired or cancelled batch no longer changes.

export type LiveStatus =
  /** loading the batch and opening its stream */
  | "connecting"
  /** the stream is open: changes arrive as they happen */
  | "live"
  /** the stream dropped; it is being reopened (`error` says why) */
  | "reconnecting"
  /** the stream cannot get through; the batch is reloaded every `pollIntervalMs` */
  | "polling"
  /** the batch is no longer pending: it will not change again, nothing is followed */
  | "settled"
  /** the API refused (401, 403, 404): `error` says why; nothing more is tried */
  | "failed";

export type FollowBatchOptions = {
  /**
   * The Countersign server ("https://countersign.example.com"), or a path of your own origin
   * that forwards `/api/v1/…` to it ("/countersign"; "" for the same origin). The API sends no
   * CORS headers: a page on another origin goes through such a proxy.
   */
  baseUrl: string;
  /** a reviewer's personal token, sent as `Authorization: Bearer …` (else the cookie, if any) */
  token?: string;
  /** fetch's `credentials`: "include" sends the reviewer's Countersign session cookie */
  credentials?: RequestCredentials;
  /** how often to reload the batch when the stream cannot be used; default 5000 ms */
  pollIntervalMs?: number;
  /** failed stream attempts in a row before polling instead; default 3 */
  streamAttempts?: number;
  /** a stream silent this long is taken as dead (the server sends a keep-alive every 15 s); default 45 000 ms */
  stallTimeoutMs?: number;
  /** the fetch to use; default the global one */
  fetch?: typeof fetch;
};

export type LiveBatch = { batch: Batch | null; error: Error | null; status: LiveStatus };

/** An answer that trying again will not change (401, 403, 404): the hook gives up. */
export class BatchRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
    this.name = "BatchRefusedError";
  }
}

const FINAL_ANSWERS = new Set([401, 403, 404]);

type SseMessage = { id: string | null; event: string; data: string };

/**
 * Follows `batchId`, calling `onChange` with every new state (the first call comes once the
 * batch is loaded, or failed to). Returns `stop`; also `refresh`, to reload at once (after a
 * decision made elsewhere, say).
 */
export function followBatch(
  batchId: string,
  options: FollowBatchOptions,
  onChange: (state: LiveBatch) => void,
): { stop: () => void; refresh: () => Promise<void> } {
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const streamAttempts = options.streamAttempts ?? 3;
  const stallTimeoutMs = options.stallTimeoutMs ?? 45_000;
  const api = `${options.baseUrl.replace(/\/+$/, "")}/api/v1`;
  const stopped = new AbortController();
  let state: LiveBatch = { batch: null, error: null, status: "connecting" };
  let lastEventId: string | null = null;
  let retryMs = 2_000;
  let stream: AbortController | null = null;

  const update = (next: Partial<LiveBatch>) => {
    if (stopped.signal.aborted) return;
    state = { ...state, ...next };
    onChange(state);
  };
  const headers = (extra: Record<string, string>): Record<string, string> =>
    options.token ? { ...extra, authorization: `Bearer ${options.token}` } : extra;
  const settled = () => state.batch !== null && state.batch.status !== "pending";

  async function refuse(response: Response): Promise<never> {
    let code: string | null = null;
    let message = `The Countersign API answered ${response.status}`;
    try {
      const body = (await response.json()) as { error?: { code?: string; message?: string } };
      code = body.error?.code ?? null;
      if (body.error?.message) message = `${message}: ${body.error.message}`;
    } catch {
      // not the API's JSON error (a proxy's page): the status says enough
    }
    throw new BatchRefusedError(response.status, code, message);
  }

  // Reloads coalesce: events that arrive during a reload cause one more reload, not one each.
  let loading: Promise<void> | null = null;
  let reloadAgain = false;
  async function loadOnce(): Promise<void> {
    const response = await fetchFn(`${api}/batches/${encodeURIComponent(batchId)}`, {
      headers: headers({ accept: "application/json" }),
      credentials: options.credentials,
      signal: stopped.signal,
    });
    if (FINAL_ANSWERS.has(response.status)) await refuse(response);
    if (!response.ok) throw new Error(`Loading the batch answered ${response.status}`);
    const batch = (await response.json()) as Batch;
    update({ batch, error: null, status: batch.status === "pending" ? state.status : "settled" });
    if (batch.status !== "pending") stream?.abort();
  }
  function load(): Promise<void> {
    if (loading) {
      reloadAgain = true;
      return loading;
    }
    loading = (async () => {
      try {
        do {
          reloadAgain = false;
          await loadOnce();
        } while (reloadAgain && !stopped.signal.aborted);
      } finally {
        loading = null;
      }
    })();
    return loading;
  }

  /** Reads one stream until it ends; true when it got through (its first bytes arrived). */
  async function readStream(runId: string): Promise<boolean> {
    const connection = new AbortController();
    stream = connection;
    const abortWithStop = () => connection.abort();
    stopped.signal.addEventListener("abort", abortWithStop);
    let stall: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      clearTimeout(stall);
      stall = setTimeout(() => connection.abort(), stallTimeoutMs);
    };
    let gotThrough = false;
    try {
      watch();
      const response = await fetchFn(`${api}/runs/${encodeURIComponent(runId)}/stream`, {
        headers: headers({
          accept: "text/event-stream",
          ...(lastEventId === null ? {} : { "last-event-id": lastEventId }),
        }),
        credentials: options.credentials,
        signal: connection.signal,
        cache: "no-store",
      });
      if (FINAL_ANSWERS.has(response.status)) await refuse(response);
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok || !type.startsWith("text/event-stream") || !response.body) {
        await response.body?.cancel();
        throw new Error(`The event stream answered ${response.status} ${type}`.trim());
      }
      const reader = response.body.getReader();
      const messages = sseParser((message) => {
        if (message.id !== null) lastEventId = message.id;
        if (message.event === "resync") return void load().catch(fail);
        if (message.event === "message" || message.data === "") return;
        try {
          const event = JSON.parse(message.data) as { batchId?: unknown };
          if (event.batchId === batchId) void load().catch(fail);
        } catch {
          // not one of the API's events: nothing to reload for
        }
      });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        watch();
        const retry = messages.push(value);
        if (retry !== null) retryMs = retry;
        if (!gotThrough) {
          gotThrough = true;
          update({ status: "live", error: null });
          // Changes between the first load and this stream's start are in no replay: reload
          // once. A reconnect (with Last-Event-ID) is replayed what it missed instead.
          if (lastEventId === null) void load().catch(fail);
        }
      }
      return gotThrough;
    } catch (error) {
      if (error instanceof BatchRefusedError) throw error;
      if (!stopped.signal.aborted && !settled()) {
        update({ error: error instanceof Error ? error : new Error(String(error)) });
      }
      return gotThrough;
    } finally {
      clearTimeout(stall);
      stopped.signal.removeEventListener("abort", abortWithStop);
      if (stream === connection) stream = null;
    }
  }

  /** Waits `ms`, or less when stopped (hours of polling must not pile up abort listeners). */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        stopped.signal.removeEventListener("abort", wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      stopped.signal.addEventListener("abort", wake);
    });

  function fail(error: unknown) {
    if (stopped.signal.aborted) return;
    const asError = error instanceof Error ? error : new Error(String(error));
    if (asError instanceof BatchRefusedError) {
      update({ error: asError, status: "failed" });
      stopped.abort();
    } else {
      update({ error: asError });
    }
  }

  async function run() {
    // The first load: retried while the network or the server is down, given up on a refusal.
    for (let attempt = 0; state.batch === null; attempt++) {
      try {
        await load();
      } catch (error) {
        fail(error);
        if (stopped.signal.aborted) return;
        await sleep(Math.min(30_000, retryMs * 2 ** attempt));
        if (stopped.signal.aborted) return;
      }
    }
    let failures = 0;
    while (!stopped.signal.aborted && !settled()) {
      const gotThrough = await readStream(state.batch!.runId);
      if (stopped.signal.aborted || settled()) return;
      failures = gotThrough ? 0 : failures + 1;
      if (failures >= streamAttempts) return poll();
      update({ status: "reconnecting" });
      await sleep(gotThrough ? retryMs : Math.min(30_000, retryMs * 2 ** (failures - 1)));
    }
  }

  async function poll() {
    update({ status: "polling" });
    while (!stopped.signal.aborted && !settled()) {
      await sleep(pollIntervalMs);
      if (stopped.signal.aborted) return;
      try {
        await load();
      } catch (error) {
        fail(error);
      }
    }
  }

  run().catch(fail);
  return {
    stop: () => stopped.abort(),
    refresh: () => load().catch(fail),
  };
}

/**
 * An incremental text/event-stream parser (the WHATWG rules that matter here): `push` takes the
 * next bytes, dispatches every complete message, and returns the last `retry:` it saw, or null.
 */
function sseParser(dispatch: (message: SseMessage) => void) {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id: string | null = null;
  return {
    push(bytes: Uint8Array): number | null {
      buffer += decoder.decode(bytes, { stream: true });
      const lines = buffer.split(/\r\n|\n|\r(?=.)/);
      buffer = lines.pop()!;
      let retry: number | null = null;
      for (const line of lines) {
        if (line === "") {
          if (data.length > 0 || event !== "") {
            dispatch({ id, event: event || "message", data: data.join("\n") });
          }
          event = "";
          data = [];
          id = null;
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: the server's keep-alive
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
        else if (field === "id" && !value.includes("\0")) id = value;
        else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
      }
      return retry;
    },
  };
}
