import type { Metadata } from "next";
import { RoutingRules } from "@/components/queue-settings/routing-rules";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { ForbiddenError } from "@/lib/errors";
import { listQueues } from "@/lib/queues/list-queues";
import { listRules } from "@/lib/routing/list-rules";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Routing · Countersign" };

export default async function RoutingPage() {
  const reviewer = await currentReviewer();
  let rules;
  try {
    rules = await listRules(reviewer);
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return (
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>Routing</h1>
          <p className={styles.lead}>Only an admin manages routing rules.</p>
        </div>
      </header>
    );
  }
  const { queues } = await listQueues(reviewer);
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>Routing</h1>
          <p className={styles.lead}>
            A batch whose agent names no queue goes to the first enabled rule, top to bottom, whose
            conditions all hold; otherwise to the agent key&apos;s default queue.
          </p>
        </div>
      </header>
      <RoutingRules
        rules={rules}
        queues={queues.filter((q) => !q.archivedAt).map((q) => ({ id: q.id, name: q.name }))}
      />
    </>
  );
}
