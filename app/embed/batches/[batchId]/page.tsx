import type { Metadata } from "next";
import { cookies } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { sessionReviewer } from "@/app/(reviewer)/current-reviewer";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import { loadBatchView } from "@/lib/read-models/batch-run-views";
import { NotFoundError } from "@/lib/errors";
import { TIME_ZONE_COOKIE, viewerTimeZone } from "@/lib/people/viewer-time-zone";
import { embedAllowedOrigins } from "../../allowed-origins";
import { EmbedBatch } from "./embed-batch";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review · Countersign" };

export default async function EmbedBatchPage({
  params,
  searchParams,
}: {
  params: Promise<{ batchId: string }>;
  searchParams: Promise<{ theme?: string }>;
}) {
  const { batchId } = await params;
  const reviewer = await sessionReviewer();
  if (!reviewer) {
    // Signed in inside the frame, the reviewer comes straight back to this card.
    redirect(`/embed/sign-in?next=${encodeURIComponent(`/embed/batches/${batchId}`)}`);
  }
  try {
    // Another queue's batch answers as if it did not exist, as on the review page.
    await findBatchForReviewer(getDb(), reviewer, batchId);
  } catch (error) {
    if (error instanceof NotFoundError) notFound();
    throw error;
  }
  const batch = (await loadBatchView(getDb(), batchId))!;
  const { theme } = await searchParams;
  const { timeZone } = await viewerTimeZone(
    reviewer.id,
    (await cookies()).get(TIME_ZONE_COOKIE)?.value,
  );
  return (
    <EmbedBatch
      initial={batch}
      viewer={{ id: reviewer.id, name: reviewer.name }}
      allowedOrigins={embedAllowedOrigins()}
      theme={theme === "light" || theme === "dark" ? theme : undefined}
      timeZone={timeZone}
    />
  );
}
