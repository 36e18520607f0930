"use client";

import { useEffect, useRef, useState } from "react";
import { followBatch, type FollowBatchOptions, type LiveBatch } from "./follow-batch";

export type UseBatchOptions = FollowBatchOptions;

export type UseBatchResult = LiveBatch & {
  /** reloads the batch now: after your backend decided, say (the stream would tell in a moment) */
  refresh: () => Promise<void>;
};

const CONNECTING: LiveBatch = { batch: null, error: null, status: "connecting" };

/**
 * The batch `batchId`, kept current: `{ batch, error, status }` change as reviewers vote and
 * decide, with no subscription to write (follow-batch.ts says how). `batch` is null until the
 * first load. A change of any option follows anew (pass a stable `fetch`, if you pass one).
 */
export function useBatch(batchId: string, options: UseBatchOptions): UseBatchResult {
  const { baseUrl, token, credentials, pollIntervalMs, streamAttempts, stallTimeoutMs } = options;
  const fetchFn = options.fetch;
  // The state of the batch followed now; an answer about an earlier id or option set is shown
  // as "connecting" until the new one's first answer, never as the new batch's.
  const followKey = JSON.stringify([batchId, baseUrl, token, credentials]);
  const [live, setLive] = useState<{ key: string; state: LiveBatch }>({
    key: followKey,
    state: CONNECTING,
  });
  const following = useRef<ReturnType<typeof followBatch> | null>(null);

  useEffect(() => {
    const current = followBatch(
      batchId,
      {
        baseUrl,
        token,
        credentials,
        pollIntervalMs,
        streamAttempts,
        stallTimeoutMs,
        fetch: fetchFn,
      },
      (state) => setLive({ key: followKey, state }),
    );
    following.current = current;
    return () => {
      current.stop();
      if (following.current === current) following.current = null;
    };
  }, [
    followKey,
    batchId,
    baseUrl,
    token,
    credentials,
    pollIntervalMs,
    streamAttempts,
    stallTimeoutMs,
    fetchFn,
  ]);

  const state = live.key === followKey ? live.state : CONNECTING;
  return { ...state, refresh: async () => following.current?.refresh() };
}
