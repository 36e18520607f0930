import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { BatchScreen } from "@/components/queue/batch-screen";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import { loadBatchView } from "@/lib/read-models/batch-run-views";
import { NotFoundError } from "@/lib/errors";
import { currentReviewer } from "../../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review · Countersign" };

export default async function BatchPage({ params }: { params: Promise<{ batchId: string }> }) {
  const reviewer = await currentReviewer();
  const { batchId } = await params;
  try {
    // Another queue's batch answers as if it did not exist.
    await findBatchForReviewer(getDb(), reviewer, batchId);
  } catch (error) {
    if (error instanceof NotFoundError) notFound();
    throw error;
  }
  const batch = (await loadBatchView(getDb(), batchId))!;
  return <BatchScreen initial={batch} viewer={{ id: reviewer.id, name: reviewer.name }} />;
}
