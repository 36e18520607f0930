"use client";

import { ReviewCard } from "@/components/review-card/index";
import type { Batch } from "@/components/review-card/types";
import { useLiveBatch } from "@/components/queue/use-live-batch";
import { APP_LOCALE } from "@/lib/time/constants";
import { useDecisionMessages } from "../../use-decision-messages";

/** The review card alone, live, telling the framing page about every decision. */
export function EmbedBatch({
  initial,
  viewer,
  allowedOrigins,
  theme,
  timeZone,
}: {
  initial: Batch;
  viewer: { id: string; name: string };
  allowedOrigins: string[];
  theme?: "light" | "dark";
  /** the viewer's zone, as the server rendered the card */
  timeZone: string;
}) {
  const { batch, onDecide, onDecideBatch, onClaim } = useLiveBatch(initial, viewer);
  useDecisionMessages(batch, allowedOrigins);
  return (
    <>
      <h1 className="visually-hidden">Review card</h1>
      <ReviewCard
        batch={batch}
        viewer={viewer}
        headingLevel={2}
        theme={theme}
        timeZone={timeZone}
        locale={APP_LOCALE}
        onDecide={onDecide}
        onDecideBatch={onDecideBatch}
        onClaim={onClaim}
      />
    </>
  );
}
