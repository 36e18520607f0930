import type { Metadata } from "next";
import type { ReactNode } from "react";
import { QueuePicker } from "@/components/policies/queue-picker";
import { SuggestionList } from "@/components/policies/suggestion-list";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { getDb } from "@/db/client";
import { ForbiddenError } from "@/lib/errors";
import { insightsQueues } from "@/lib/insights/read-insights";
import { listPolicySuggestions, type PolicySuggestions } from "@/lib/policies/suggest-policies";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Suggestions · Countersign" };

// Allow rules the queue's reviewers have been applying by hand (lib/policies/mine-suggestions.ts),
// for its leads and admins: each with its backtest, created (on or off) or dismissed in one click.
export default async function SuggestionsPage({
  searchParams,
}: {
  searchParams: Promise<{ queue?: string | string[] }>;
}) {
  const reviewer = await currentReviewer();
  const asked = (await searchParams).queue;
  let queues;
  try {
    queues = await insightsQueues(getDb(), reviewer);
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return (
      <>
        {heading(null)}
        <p className={styles.lead} data-testid="suggestions-refused">
          Suggestions are for a queue&apos;s lead or an admin.
        </p>
      </>
    );
  }
  const queue = typeof asked === "string" ? queues.find((q) => q.id === asked) : queues[0];
  const header = heading(
    queues.length > 0 && (
      <QueuePicker queues={queues} current={queue?.id ?? null} path="/suggestions" />
    ),
  );
  let answer: PolicySuggestions | null = null;
  if (queue) answer = await listPolicySuggestions(reviewer, { queue: queue.id });
  return (
    <>
      {header}
      {!queue ? (
        <p className={styles.lead}>That queue is not one you lead. Choose one above.</p>
      ) : (
        <SuggestionList key={queue.id} queue={queue} answer={answer!} />
      )}
    </>
  );
}

function heading(picker: ReactNode) {
  return (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>Policy suggestions</h1>
        <p className={styles.lead}>
          Calls your reviewers approved as asked at least 20 times in the last 30 days, and never
          rejected, edited or let expire: each could be a rule, so nobody has to read that card
          again.
        </p>
      </div>
      {picker}
    </header>
  );
}
