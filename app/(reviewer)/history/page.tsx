import type { Metadata } from "next";
import { HistoryPage, type HistoryProblem } from "@/components/history/history-page";
import { cursorOf, filtersOf } from "@/components/history/history-query";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { ApiError } from "@/lib/errors";
import { historyFilterOptions } from "@/lib/history/filter-options";
import { listHistory } from "@/lib/history/list-history";
import { currentReviewer, currentTimeZone } from "../current-reviewer";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "History · Countersign" };

const PAGE_SIZE = 50;

export default async function HistoryRoute({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const reviewer = await currentReviewer();
  const params = await searchParams;
  const filters = filtersOf(params);
  const cursor = cursorOf(params);
  const options = await historyFilterOptions(reviewer);
  // The From and To days are the reviewer's own calendar days, in the zone the page shows.
  const { timeZone } = await currentTimeZone();

  let page: { batches: BatchView[]; nextCursor: string | null } = { batches: [], nextCursor: null };
  let problem: HistoryProblem | undefined;
  try {
    page = await listHistory(reviewer, { ...filters, timeZone, cursor, limit: PAGE_SIZE });
  } catch (error) {
    // A filter from a hand-edited URL (a bad date, a queue that is not theirs) is shown, not thrown.
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    const issues = (error.extra.issues as HistoryProblem["issues"] | undefined) ?? [];
    problem = { message: error.message, issues };
  }
  return (
    <HistoryPage
      filters={filters}
      options={options}
      cursor={problem ? null : (cursor ?? null)}
      page={page}
      problem={problem}
      now={renderTime()}
      timeZone={timeZone}
    />
  );
}

/** The clock every relative time on the page is measured from, read once per request. */
function renderTime(): number {
  return Date.now();
}
