"use client";

import Link from "next/link";
import { ReviewCard } from "@/components/review-card/index";
import type { Batch } from "@/components/review-card/types";
import { useViewerTimeFormat } from "@/components/time/time-zone-provider";
import styles from "./queue.module.css";
import { useLiveBatch } from "./use-live-batch";

/**
 * One card on its own page (the `reviewUrl` agents hand out), as live as the queue.
 */
export function BatchScreen({
  initial,
  viewer,
}: {
  initial: Batch;
  viewer: { id: string; name: string };
}) {
  const { batch, onDecide, onDecideBatch, onClaim } = useLiveBatch(initial, viewer);
  const { timeZone, locale } = useViewerTimeFormat();
  return (
    <div className={styles.screen}>
      <p>
        <Link href="/queue">← Queue</Link>
      </p>
      <h1 className="visually-hidden">Review card</h1>
      <ReviewCard
        batch={batch}
        viewer={viewer}
        // Under this page's h1: the card's title is the next level, not a skipped one.
        headingLevel={2}
        runHref={(runId) => `/runs/${runId}`}
        onDecide={onDecide}
        onDecideBatch={onDecideBatch}
        onClaim={onClaim}
        timeZone={timeZone}
        locale={locale}
      />
    </div>
  );
}
