import type { Metadata } from "next";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { SsoSettingsForm } from "@/components/sso/sso-settings-form";
import { ForbiddenError } from "@/lib/errors";
import { listQueues } from "@/lib/queues/list-queues";
import { getSsoSettings } from "@/lib/sso/get-sso-settings";
import { currentReviewer } from "../../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Single sign-on · Countersign" };

export default async function SsoSettingsPage() {
  const reviewer = await currentReviewer();
  const header = (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>Single sign-on</h1>
        <p className={styles.lead}>
          Let people sign in with your company&apos;s OpenID Connect identity provider. Passwords
          keep working.
        </p>
      </div>
    </header>
  );
  let current;
  try {
    current = await getSsoSettings(reviewer);
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return (
      <>
        {header}
        <p className={styles.lead}>Only an admin configures single sign-on.</p>
      </>
    );
  }
  const { queues } = await listQueues(reviewer);
  return (
    <>
      {header}
      <SsoSettingsForm
        current={current.configured ? current.settings : null}
        redirectUri={current.configured ? current.settings.redirectUri : current.redirectUri}
        queues={queues.filter((q) => !q.archivedAt).map((q) => ({ id: q.id, name: q.name }))}
      />
    </>
  );
}
