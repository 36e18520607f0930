import type { Metadata } from "next";
import { NewQueueForm } from "@/components/queue-settings/new-queue-form";
import { QueueList } from "@/components/queue-settings/queue-list";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { listQueues } from "@/lib/queues/list-queues";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Queues · Countersign" };

export default async function QueuesRoute() {
  const reviewer = await currentReviewer();
  const { queues, canCreateQueues } = await listQueues(reviewer);
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>Queues</h1>
          <p className={styles.lead}>
            {canCreateQueues
              ? "Every queue of this installation: you are an admin."
              : "The queues you belong to, with their rules."}
          </p>
        </div>
      </header>
      {canCreateQueues && <NewQueueForm />}
      <QueueList queues={queues} />
    </>
  );
}
