import type { Metadata } from "next";
import { InsightsView } from "@/components/insights/insights-view";
import { PeriodPicker, type PeriodFieldErrors } from "@/components/insights/period-picker";
import styles from "@/components/queue-settings/queue-settings.module.css";
import insightsStyles from "@/components/insights/insights.module.css";
import { getDb } from "@/db/client";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "@/lib/errors";
import { InsightsSearch, periodOf } from "@/lib/insights/insights-period";
import { insightsQueues, readInsights, type Insights } from "@/lib/insights/read-insights";
import { currentReviewer, currentTimeZone } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Insights · Countersign" };

export default async function InsightsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const reviewer = await currentReviewer();
  const params = await searchParams;
  const header = (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>Insights</h1>
        <p className={styles.lead}>
          How your queues are doing: cards created and settled, how long they wait for a person, who
          decides, deadlines missed and escalations.
        </p>
      </div>
    </header>
  );

  let queues;
  try {
    queues = await insightsQueues(getDb(), reviewer);
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return (
      <>
        {header}
        <p className={styles.lead} data-testid="insights-refused">
          Insights are for a queue&apos;s lead or an admin: you review cards but do not lead a
          queue. Ask an admin if you need them.
        </p>
      </>
    );
  }

  // One value per key: a repeated key in a hand-edited URL keeps its first.
  const raw = Object.fromEntries(
    Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value]),
  );
  // An empty field of the GET form (no custom days, all queues) means "not given".
  for (const key of Object.keys(raw)) if (raw[key] === "") delete raw[key];
  const search = InsightsSearch.safeParse(raw);
  // Days are the viewer's calendar days, as History's are.
  const { timeZone } = await currentTimeZone();
  let problem: string | null = null;
  const fieldErrors: PeriodFieldErrors = {};
  let insights: Insights | null = null;
  if (!search.success) {
    // Each problem under its field, as the other forms show theirs.
    for (const issue of search.error.issues) {
      const key = issue.path[0] as keyof PeriodFieldErrors | undefined;
      if (key && ["queue", "period", "from", "to"].includes(key))
        fieldErrors[key] ??= issue.message;
      else problem ??= `That period cannot be shown: ${issue.message}.`;
    }
  } else {
    try {
      insights = await readInsights(reviewer, {
        queueId: search.data.queue,
        timeZone,
        ...periodOf(search.data, renderTime(), timeZone),
      });
    } catch (error) {
      // A hand-edited URL (a queue not theirs, a period over a year) is shown, not thrown.
      if (error instanceof NotFoundError) problem = "That queue is not one of yours.";
      else if (error instanceof InvalidRequestError) problem = error.message;
      else throw error;
    }
  }
  const queueHref = (queueId: string) => {
    const next = new URLSearchParams(
      Object.entries(raw).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    next.set("queue", queueId);
    return `/insights?${next.toString()}`;
  };
  return (
    <>
      {header}
      <PeriodPicker
        search={search.success ? search.data : raw}
        queues={queues}
        timeZone={timeZone}
        errors={fieldErrors}
      />
      {problem && (
        <p className={insightsStyles.problem} role="alert">
          {problem}
        </p>
      )}
      {insights && <InsightsView insights={insights} queueHref={queueHref} timeZone={timeZone} />}
    </>
  );
}

/** The clock a preset period ends at, read once per request. */
function renderTime(): number {
  return Date.now();
}
