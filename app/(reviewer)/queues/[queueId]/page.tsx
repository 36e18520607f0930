import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { AddMemberForm } from "@/components/queue-settings/add-member-form";
import { ArchiveControl } from "@/components/queue-settings/archive-control";
import { MembersTable } from "@/components/queue-settings/members-table";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { SettingsForm } from "@/components/queue-settings/settings-form";
import { SettingsSummary } from "@/components/queue-settings/settings-summary";
import { Badge } from "@/components/run-timeline/badges";
import { NotFoundError } from "@/lib/errors";
import { getQueue } from "@/lib/queues/get-queue";
import { listQueues } from "@/lib/queues/list-queues";
import { currentReviewer } from "../../current-reviewer";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Queue settings · Countersign" };

export default async function QueueSettingsRoute({
  params,
}: {
  params: Promise<{ queueId: string }>;
}) {
  const reviewer = await currentReviewer();
  const { queueId } = await params;
  const queue = await getQueue(reviewer, queueId).catch((error: unknown) => {
    if (error instanceof NotFoundError) notFound();
    throw error;
  });
  const { canManage, isAdmin } = queue.access;
  // escalation targets: the other open queues this reviewer can see (the verb checks the same)
  const escalationOptions = canManage
    ? (await listQueues(reviewer)).queues
        .filter((q) => q.id !== queue.id && q.archivedAt === null)
        .map(({ id, name }) => ({ id, name }))
    : [];

  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>
            {queue.name} {queue.archivedAt && <Badge tone="neutral">Archived</Badge>}
          </h1>
          <p className={styles.lead}>
            {canManage
              ? "You can change this queue's rules and members."
              : "Only a lead or an admin can change this queue."}
          </p>
        </div>
        <Link href="/queues" className={styles.back}>
          All queues
        </Link>
      </header>

      <section className={styles.panel} aria-labelledby="settings-title">
        <h2 id="settings-title" className={styles.panelTitle}>
          Settings
        </h2>
        {canManage ? (
          <SettingsForm queue={queue} escalationOptions={escalationOptions} />
        ) : (
          <SettingsSummary queue={queue} />
        )}
        {queue.archivedAt && (
          <p className={styles.note}>This queue is archived: its settings no longer change.</p>
        )}
      </section>

      <section className={styles.panel} aria-labelledby="members-title">
        <h2 id="members-title" className={styles.panelTitle}>
          Members ({queue.members.length})
        </h2>
        <MembersTable queue={queue} />
        {canManage && queue.archivedAt === null && (
          <AddMemberForm queueId={queue.id} isAdmin={isAdmin} />
        )}
      </section>

      {isAdmin && queue.archivedAt === null && (
        <section className={styles.panel} aria-labelledby="archive-title">
          <h2 id="archive-title" className={styles.panelTitle}>
            Archive
          </h2>
          <ArchiveControl queueId={queue.id} name={queue.name} />
        </section>
      )}
    </>
  );
}
