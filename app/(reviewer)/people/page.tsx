import type { Metadata } from "next";
import { People } from "@/components/people/people";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { ForbiddenError } from "@/lib/errors";
import { listPeople } from "@/lib/people/list-people";
import { listQueues } from "@/lib/queues/list-queues";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "People · Countersign" };

export default async function PeoplePage() {
  const reviewer = await currentReviewer();
  const header = (lead: string) => (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>People</h1>
        <p className={styles.lead}>{lead}</p>
      </div>
    </header>
  );
  let people;
  try {
    people = (await listPeople(reviewer)).people;
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return header("Only an admin or a queue's lead manages people.");
  }
  const { queues } = await listQueues(reviewer);
  const open = queues.filter((q) => q.archivedAt === null && q.access.canManage);
  // An admin manages every queue (and has the admin role in one); a lead only the queues they lead.
  const isAdmin = queues.some((q) => q.access.role === "admin");
  return (
    <>
      {header(
        isAdmin
          ? "Everyone who can sign in. Invite people by a one-time link, rename them, reset a password, or deactivate someone to shut them out at once."
          : "The members of the queues you lead. Invite people into them, or send a member a password reset link.",
      )}
      <People
        people={people}
        queues={open.map(({ id, name }) => ({ id, name }))}
        isAdmin={isAdmin}
        viewerId={reviewer.id}
      />
    </>
  );
}
