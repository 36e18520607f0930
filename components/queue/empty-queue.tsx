import Link from "next/link";
import type { QueueContact, ViewerRole } from "@/lib/queues/viewer-role";
import styles from "./queue.module.css";

/** What an empty queue tells this person (issue 26): what reaches them, whom to ask, what to run. */
export type QueueWelcome = {
  role: ViewerRole;
  /** the open queues they are a member of */
  queueNames: string[];
  /** the leads and admins of those queues, the people to ask for more */
  contacts: QueueContact[];
  /** whether this installation can send email (SMTP_URL) */
  emailConfigured: boolean;
};

export function EmptyQueue({
  filtered,
  status,
  welcome,
}: {
  filtered: boolean;
  status: string;
  welcome?: QueueWelcome;
}) {
  if (filtered)
    return (
      <div className={styles.empty} data-testid="queue-empty">
        <h2>No cards match these filters</h2>
        <p>Clear a filter to see more.</p>
      </div>
    );
  if (status !== "pending")
    return (
      <div className={styles.empty} data-testid="queue-empty">
        <h2>No decided cards yet</h2>
        <p>Decisions made in your queues show up here.</p>
      </div>
    );
  const role = welcome?.role ?? "reviewer";
  const queueNames = welcome?.queueNames ?? [];
  return (
    <div className={styles.empty} data-testid="queue-empty" data-role={role}>
      <h2>Nothing is waiting for you</h2>
      {queueNames.length === 0 ? (
        <p>
          You are not in a queue yet, so no card can reach you. Ask an admin of Countersign to add
          you to the queue you review.
        </p>
      ) : (
        <p>
          Cards of {listOf(queueNames)} appear here the moment an agent pauses; no need to reload.
        </p>
      )}
      {role === "reviewer" && queueNames.length > 0 && (
        <p data-testid="queue-empty-ask">
          To review another queue, ask{" "}
          {welcome && welcome.contacts.length > 0
            ? listOf(
                welcome.contacts.map((c) => `${c.name} (${c.role} of ${c.queueName})`),
                "or",
              )
            : "an admin"}{" "}
          to add you to it.
        </p>
      )}
      <p data-testid="queue-empty-notify">
        Away from this page? Tick <strong>Notify me</strong> above for a browser notification when a
        card arrives
        {welcome?.emailConfigured ? (
          <>
            , or choose email in <Link href="/notifications">Notifications</Link>
          </>
        ) : null}
        .
      </p>
      {role === "lead" && (
        <p>
          An agent sends cards with a key of its own: create one in{" "}
          <Link href="/agents">Agents</Link>.
        </p>
      )}
      {role === "admin" && (
        <p data-testid="queue-empty-demo">
          A fresh install? To see a card now, run <code>npm run demo</code> in another terminal.
        </p>
      )}
    </div>
  );
}

/** ["a", "b", "c"] → "a, b and c" */
function listOf(items: string[], last = "and"): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} ${last} ${items.at(-1)}`;
}
