import type { Metadata } from "next";
import { AgentKeys } from "@/components/credentials/agent-keys";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { listAgentKeys } from "@/lib/agents/agent-keys";
import { ForbiddenError } from "@/lib/errors";
import { listQueues } from "@/lib/queues/list-queues";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Agent keys · Countersign" };

export default async function AgentsPage() {
  const reviewer = await currentReviewer();
  const header = (lead: string) => (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>Agent keys</h1>
        <p className={styles.lead}>{lead}</p>
      </div>
    </header>
  );
  let agents;
  try {
    agents = await listAgentKeys(reviewer);
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return header("Only an admin or a queue's lead manages agent keys.");
  }
  const { queues } = await listQueues(reviewer);
  // The queues a key may be given: every open one for an admin, those they lead for a lead.
  const usable = queues
    .filter((q) => q.archivedAt === null && q.access.canManage)
    .map(({ id, name }) => ({ id, name }));
  return (
    <>
      {header(
        "Each agent authenticates with its own key. Rotate a key to replace its secret (the old one keeps working for a while), revoke it to shut the agent out at once.",
      )}
      <AgentKeys agents={agents} queues={usable} />
    </>
  );
}
