"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import {
  claimReviewAction,
  decideBatchAction,
  decideCallAction,
  releaseReviewAction,
  type BatchResult,
} from "@/app/(reviewer)/actions";
import type { ReviewCardProps } from "@/components/review-card/index";
import type { Batch, DecisionResult } from "@/components/review-card/types";
import { toDecisionResult } from "./decision-result";
import { useHeldClaims } from "./use-held-claims";

// Every event type that can change one card.
const BATCH_EVENTS = [
  "call.voted",
  "call.edited",
  "call.decided",
  "batch.decided",
  "batch.expired",
  "batch.cancelled",
  "batch.escalated",
  "review.claimed",
  "review.released",
  "batch.set_aside",
  "batch.brought_back",
];

export type LiveBatch = { batch: Batch } & Required<
  Pick<ReviewCardProps, "onDecide" | "onDecideBatch" | "onClaim">
>;

/**
 * One batch kept live for a card on its own (the review page, the embed): it follows the run's
 * stream and refetches the batch whenever an event touches it; decisions go through the server
 * actions and their answer (or the current state, on a conflict) replaces the cached batch.
 */
export function useLiveBatch(initial: Batch, viewer: { id: string }): LiveBatch {
  const client = useQueryClient();
  const key = ["batch", initial.id];
  const { data: batch = initial } = useQuery({
    queryKey: key,
    initialData: initial,
    queryFn: async () => {
      const response = await fetch(`/api/v1/batches/${encodeURIComponent(initial.id)}`);
      if (!response.ok) throw new Error(`The batch answered ${response.status}`);
      return (await response.json()) as Batch;
    },
  });

  useEffect(() => {
    const source = new EventSource(`/api/v1/runs/${encodeURIComponent(initial.runId)}/stream`);
    const touched = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as { batchId: string | null };
      if (event.batchId === initial.id) void client.invalidateQueries({ queryKey: key });
    };
    for (const type of BATCH_EVENTS) source.addEventListener(type, touched);
    return () => source.close();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- one stream per batch
  }, [client, initial.id, initial.runId]);

  const settle = (result: BatchResult): DecisionResult => {
    const { decision, view } = toDecisionResult(result);
    if (view) client.setQueryData(key, view);
    return decision;
  };

  const onClaim = async (batchId: string, claim: boolean) =>
    settle(await (claim ? claimReviewAction(batchId) : releaseReviewAction(batchId)));
  useHeldClaims([batch], viewer.id, onClaim);

  return {
    batch,
    onDecide: async ({ callId, ...decision }) =>
      settle(await decideCallAction(batch.id, callId, decision)),
    onDecideBatch: async ({ batchId, ...decision }) =>
      settle(await decideBatchAction(batchId, decision)),
    onClaim,
  };
}
