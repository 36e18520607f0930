import type { Metadata } from "next";
import { NotificationPreferences } from "@/components/notifications/notification-preferences";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { listNotificationPreferences } from "@/lib/notifications/preferences";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications · Countersign" };

export default async function NotificationsPage() {
  const reviewer = await currentReviewer();
  const { preferences, emailConfigured } = await listNotificationPreferences(reviewer);
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>Notifications</h1>
          <p className={styles.lead}>
            Email to {reviewer.email} when something in your queues needs you: at once, in a digest,
            or not at all, per queue.
          </p>
        </div>
      </header>
      <NotificationPreferences preferences={preferences} emailConfigured={emailConfigured} />
    </>
  );
}
