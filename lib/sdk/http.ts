import { CountersignError, errorFromResponse } from "./errors.js";
import {
  backoffMs,
  isRetryableStatus,
  parseRetryAfter,
  retryPolicy,
  sleep,
  type RetryOptions,
  type RetryPolicy,
} from "./retry.js";

// The one place the SDK talks HTTP: auth, JSON, per-attempt timeouts, retries and error mapping.

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export type TransportOptions = {
  baseUrl: string;
  apiKey: string;
  fetch?: FetchLike;
  retry?: RetryOptions | false;
  /** how long one attempt of an ordinary request may take (default 30 s) */
  requestTimeoutMs?: number;
};

export type RequestOptions<T> = {
  method: "GET" | "POST";
  /** under /api/v1, e.g. `/runs/abc/claim` */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * Called with the error a retry got, when an earlier attempt may have reached the server: a
   * retried `complete` that finds the run completed was the first attempt's success. Return the
   * answer to use instead, or undefined to throw the error.
   */
  recover?: (error: CountersignError) => T | undefined;
};

export class Transport {
  readonly apiUrl: string;
  readonly retry: RetryPolicy;
  private readonly fetcher: FetchLike;
  private readonly apiKey: string;
  private readonly requestTimeoutMs: number;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError("Countersign: baseUrl is required.");
    if (!options.apiKey) throw new TypeError("Countersign: apiKey is required.");
    const base = options.baseUrl.replace(/\/+$/, "");
    this.apiUrl = base.endsWith("/api/v1") ? base : `${base}/api/v1`;
    this.apiKey = options.apiKey;
    this.retry = retryPolicy(options.retry);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    const fetcher = options.fetch ?? globalThis.fetch;
    if (typeof fetcher !== "function") {
      throw new TypeError("Countersign: no fetch in this runtime; pass one as options.fetch.");
    }
    // Called unbound, a browser's window.fetch throws "Illegal invocation".
    this.fetcher = (input, init) => fetcher.call(globalThis, input, init);
  }

  /** A JSON request, retried on transient failures; resolves with the parsed answer. */
  async request<T>(options: RequestOptions<T>): Promise<T> {
    const url = this.url(options.path, options.query);
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${this.apiKey}`,
    };
    // Serialized once, so every retry sends the very body the Idempotency-Key was first used with.
    let body: string | undefined;
    if (options.method === "POST") {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body ?? {});
    }
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;

    let mayHaveReachedServer = false;
    for (let attempt = 0; ; attempt++) {
      let failure: CountersignError;
      try {
        const response = await this.send(url, { method: options.method, headers, body }, options);
        const { text } = response;
        const parsed = parseJson(text);
        if (response.ok) {
          if (parsed === undefined && text !== "") throw invalidResponse(response.status);
          return (parsed ?? null) as T;
        }
        failure = errorFromResponse(
          response.status,
          parsed ?? null,
          parseRetryAfter(response.headers.get("retry-after")),
        );
        if (!isRetryableStatus(response.status)) {
          const recovered = mayHaveReachedServer ? options.recover?.(failure) : undefined;
          if (recovered !== undefined) return recovered;
          throw failure;
        }
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (error instanceof CountersignError && !isRetryable(error)) throw error;
        failure = error instanceof CountersignError ? error : networkError(error, url);
      }
      if (attempt >= this.retry.retries) throw failure;
      // Asked to come back later than we would wait: the caller decides (retryAfterMs says when).
      if (failure.retryAfterMs !== null && failure.retryAfterMs > this.retry.maxDelayMs)
        throw failure;
      mayHaveReachedServer = true;
      await sleep(backoffMs(this.retry, attempt + 1, failure.retryAfterMs), options.signal);
    }
  }

  /** One attempt, no retries: for streams, whose reconnects the caller runs. */
  open(
    path: string,
    init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Response> {
    return this.fetcher(this.url(path), {
      method: "GET",
      headers: { authorization: `Bearer ${this.apiKey}`, ...init.headers },
      signal: init.signal,
    });
  }

  url(path: string, query: Record<string, string | number | undefined> = {}): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) search.set(name, String(value));
    }
    const qs = search.toString();
    return `${this.apiUrl}${path}${qs ? `?${qs}` : ""}`;
  }

  /** fetch with the caller's signal and a per-attempt timeout, as one signal. */
  private async send(
    url: string,
    init: RequestInit,
    options: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<{ ok: boolean; status: number; headers: Headers; text: string }> {
    const controller = new AbortController();
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    const timer = setTimeout(() => controller.abort(new CountersignTimeout(timeoutMs)), timeoutMs);
    const onAbort = () => controller.abort(options.signal!.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await this.fetcher(url, { ...init, signal: controller.signal });
      // Read inside the timeout too: a connection that stalls mid-body is as dead as one that never answered.
      const text = await response.text();
      return { ok: response.ok, status: response.status, headers: response.headers, text };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}

class CountersignTimeout extends Error {
  constructor(readonly ms: number) {
    super(`No answer within ${ms} ms.`);
  }
}

function isRetryable(error: CountersignError): boolean {
  return error.status === 0 || isRetryableStatus(error.status);
}

function networkError(cause: unknown, url: string): CountersignError {
  const reason =
    cause instanceof CountersignTimeout
      ? cause.message
      : cause instanceof Error
        ? describeCause(cause)
        : String(cause);
  return new CountersignError({
    status: 0,
    code: "network_error",
    message: `No answer from Countersign at ${url}: ${reason}`,
    cause,
  });
}

/** Node's fetch says only "fetch failed"; the useful part (ECONNREFUSED…) is in its cause. */
function describeCause(error: Error): string {
  const inner = error.cause as { code?: string; message?: string } | undefined;
  const detail = inner?.code ?? inner?.message;
  return detail ? `${error.message} (${detail})` : error.message;
}

function invalidResponse(status: number): CountersignError {
  return new CountersignError({
    status,
    code: "invalid_response",
    message: `The server answered ${status} with a body that is not JSON.`,
  });
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A fresh Idempotency-Key: one per logical create, reused by all of its retries. */
export function newIdempotencyKey(): string {
  const cryptoApi = globalThis.crypto;
  if (cryptoApi?.randomUUID) return cryptoApi.randomUUID();
  const bytes = new Uint8Array(16);
  if (cryptoApi?.getRandomValues) cryptoApi.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
