import Link from "next/link";
import type { Metadata } from "next";
import { AgentModes } from "@/components/policies/agent-modes";
import { PolicyRules } from "@/components/policies/policy-rules";
import policyStyles from "@/components/policies/policies.module.css";
import { QueuePicker } from "@/components/policies/queue-picker";
import { TryCall } from "@/components/policies/try-call";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { listAgentKeys } from "@/lib/agents/agent-keys";
import { listPolicyRules } from "@/lib/policies/list-policy-rules";
import { listQueues } from "@/lib/queues/list-queues";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Policies · Countersign" };

export default async function PoliciesPage({
  searchParams,
}: {
  searchParams: Promise<{ queue?: string | string[] }>;
}) {
  const reviewer = await currentReviewer();
  const asked = (await searchParams).queue;
  const { queues } = await listQueues(reviewer);
  const open = queues.filter((q) => q.archivedAt === null);
  // Without a choice: the first queue the reviewer belongs to (an admin sees every queue).
  const queue =
    typeof asked === "string"
      ? open.find((q) => q.id === asked)
      : (open.find((q) => q.access.role !== null) ?? open[0]);
  const options = open.map(({ id, name }) => ({ id, name }));

  const header = (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>Policies</h1>
        <p className={styles.lead}>
          Rules that settle an agent&apos;s tool call before it reaches a reviewer.
        </p>
      </div>
      {options.length > 0 && <QueuePicker queues={options} current={queue?.id ?? null} />}
    </header>
  );

  if (!queue) {
    return (
      <>
        {header}
        <div className={styles.empty}>
          {open.length === 0 ? (
            <>
              <p className={styles.emptyTitle}>You are not in any queue yet</p>
              <p className={styles.emptyText}>
                Policies belong to queues. Ask a lead or an admin to add you to one.
              </p>
            </>
          ) : (
            <>
              <p className={styles.emptyTitle}>That queue is not one of yours</p>
              <p className={styles.emptyText}>Choose one of your queues above.</p>
            </>
          )}
        </div>
      </>
    );
  }

  const { canManage, isAdmin } = queue.access;
  const rules = await listPolicyRules(reviewer, { queueId: queue.id });
  const agents = isAdmin ? await listAgentKeys(reviewer) : null;
  return (
    <>
      {header}
      <aside className={policyStyles.precedence} aria-labelledby="precedence-title">
        <h2 id="precedence-title" className={policyStyles.precedenceTitle}>
          How a call is decided
        </h2>
        <p>
          Each rule is <strong>allow</strong> (approve at once), <strong>ask</strong> (a reviewer
          decides) or <strong>deny</strong> (block, and tell the agent why). When several match a
          call:
        </p>
        <ol>
          <li>deny wins over ask, and ask over allow;</li>
          <li>then the most specific rule, the one with the most conditions;</li>
          <li>then a queue&apos;s own rule before a rule for every queue;</li>
          <li>then the order the rules are listed in.</li>
        </ol>
        <p>No rule matches: a reviewer decides. Rules that are off are skipped.</p>
      </aside>
      {!canManage && (
        <p className={policyStyles.readOnly} data-testid="policies-read-only">
          You can read these rules; a lead of {queue.name} or an admin changes them.
        </p>
      )}
      {canManage && (
        // Reached from here rather than the header: the header keeps to one row at 1280 px
        <p className={policyStyles.suggestionsLink}>
          Rules {queue.name}&apos;s reviewers have been applying by hand:{" "}
          <Link href={`/suggestions?queue=${queue.id}`}>Suggestions</Link>
        </p>
      )}
      <PolicyRules
        key={queue.id}
        queue={{ id: queue.id, name: queue.name }}
        queueRules={rules.filter((rule) => rule.queue !== null)}
        globalRules={rules.filter((rule) => rule.queue === null)}
        canManage={canManage}
        isAdmin={isAdmin}
      />
      <TryCall key={`try-${queue.id}`} queue={{ id: queue.id, name: queue.name }} />
      {agents && <AgentModes agents={agents} />}
    </>
  );
}
