// When and how long to wait before trying a request again. Transient failures only: no answer at
// all, 408, 429, 502, 503, 504. Any other 4xx is the caller's to fix and is never retried.

export type RetryOptions = {
  /** tries after the first (default 4); 0 turns retries off */
  retries?: number;
  /** the first backoff (default 250 ms); each next one doubles, with full jitter */
  minDelayMs?: number;
  /** the longest backoff (default 10 s); a Retry-After longer than this is not waited for: the error is thrown */
  maxDelayMs?: number;
};

export type RetryPolicy = Required<RetryOptions>;

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { retries: 0, minDelayMs: 0, maxDelayMs: 0 };
  return {
    retries: options?.retries ?? 4,
    minDelayMs: options?.minDelayMs ?? 250,
    maxDelayMs: options?.maxDelayMs ?? 10_000,
  };
}

const RETRYABLE_STATUSES = new Set([408, 429, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * The wait before retry number `attempt` (1 for the first retry): exponential with jitter (so
 * many clients cut off at once do not come back at once), or the server's Retry-After.
 */
export function backoffMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | null = null,
): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** (attempt - 1));
  return policy.minDelayMs / 2 + Math.random() * (ceiling - policy.minDelayMs / 2);
}

/** A Retry-After header (seconds, or an HTTP date) in milliseconds; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
