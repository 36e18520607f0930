"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect } from "react";
import {
  claimReviewAction,
  decideBatchAction,
  decideCallAction,
  releaseReviewAction,
  type BatchResult,
} from "@/app/(reviewer)/actions";
import { ReviewCard, type DecisionResult } from "@/components/review-card";
import type { Batch } from "@/components/review-card/types";
import { toDecisionResult } from "./decision-result";
import styles from "./queue.module.css";
import { useHeldClaims } from "./use-held-claims";

/**
 * One card on its own page (the `reviewUrl` agents hand out). It follows the run's stream and
 * refetches the batch whenever an event touches it, so it is as live as the queue.
 */
export function BatchScreen({
  initial,
  viewer,
}: {
  initial: Batch;
  viewer: { id: string; name: string };
}) {
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
    for (const type of [
      "call.voted",
      "call.edited",
      "call.decided",
      "batch.decided",
      "batch.expired",
      "batch.cancelled",
      "batch.escalated",
      "review.claimed",
      "review.released",
    ]) {
      source.addEventListener(type, touched);
    }
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

  return (
    <div className={styles.screen}>
      <p>
        <Link href="/queue">← Queue</Link>
      </p>
      <h1 className="visually-hidden">Review card</h1>
      <ReviewCard
        batch={batch}
        viewer={viewer}
        runHref={(runId) => `/runs/${runId}`}
        onDecide={async ({ callId, ...decision }) =>
          settle(await decideCallAction(batch.id, callId, decision))
        }
        onDecideBatch={async ({ batchId, ...decision }) =>
          settle(await decideBatchAction(batchId, decision))
        }
        onClaim={onClaim}
      />
    </div>
  );
}
