import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { RunPage } from "@/components/run-timeline/run-page";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";
import { runTimeline, type RunTimeline } from "@/lib/runs/run-timeline";
import { currentReviewer, currentTimeZone } from "../../current-reviewer";

export const dynamic = "force-dynamic";

type Props = {
  params: Promise<{ runId: string }>;
  searchParams: Promise<{ cursor?: string | string[] }>;
};

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { runId } = await params;
  return { title: `Run ${runId.slice(-8)} · Countersign` };
}

export default async function RunRoute({ params, searchParams }: Props) {
  const reviewer = await currentReviewer();
  const { runId } = await params;
  const { cursor } = await searchParams;
  const pageCursor = typeof cursor === "string" && cursor !== "" ? cursor : null;
  let timeline: RunTimeline;
  try {
    timeline = await runTimeline(reviewer, runId, { cursor: pageCursor ?? undefined });
  } catch (error) {
    // A run the reviewer may not see looks exactly like one that does not exist.
    if (error instanceof NotFoundError || error instanceof InvalidRequestError) notFound();
    throw error;
  }
  const { timeZone } = await currentTimeZone();
  return <RunPage timeline={timeline} cursor={pageCursor} now={renderTime()} timeZone={timeZone} />;
}

/** The clock every relative time on the page is measured from, read once per request. */
function renderTime(): number {
  return Date.now();
}
