import type { BatchView, CallView } from "@/lib/read-models/batch-run-views";
import { DiffView } from "@/components/review-card/diff-view";
import { Time } from "@/components/time/time";
import styles from "./history.module.css";

// What an auditor needs beyond "who decided": each call's own outcome (which call of a mixed
// batch was rejected), what an edit changed, and what a plan said (and what it was approved as).

type Edit = { call: CallView; editedArgs: unknown };

/** The calls approved with a reviewer's edit, with what they were approved as. */
export function editsOf(batch: BatchView): Edit[] {
  return batch.calls.flatMap((call) =>
    call.decision?.outcome === "approved" &&
    call.decision.editedArgs !== null &&
    call.decision.editedArgs !== undefined
      ? [{ call, editedArgs: call.decision.editedArgs }]
      : [],
  );
}

const OUTCOME_WORD: Record<string, string> = {
  approved: "Approved",
  rejected: "Rejected",
  expired: "Expired",
  cancelled: "Withdrawn",
  pending: "Pending",
};

function callOutcome(call: CallView): { word: string; tone: "ok" | "danger" | "muted" } {
  const outcome = call.decision?.outcome ?? call.status;
  const edited = call.decision?.outcome === "approved" && call.decision.editedArgs != null;
  if (call.decision?.policy?.blocked) return { word: "Blocked by policy", tone: "danger" };
  return {
    word: `${OUTCOME_WORD[outcome] ?? outcome}${edited ? " with an edit" : ""}`,
    tone: outcome === "approved" ? "ok" : outcome === "rejected" ? "danger" : "muted",
  };
}

/** One line per call when a batch has several: its tool and its own outcome. */
export function CallOutcomes({ batch }: { batch: BatchView }) {
  if (batch.calls.length < 2) return null;
  return (
    <ul className={styles.callOutcomes} data-testid="history-call-outcomes" aria-label="Each call">
      {batch.calls.map((call) => {
        const { word, tone } = callOutcome(call);
        return (
          <li key={call.id} data-call-id={call.id}>
            <code>{call.toolName}</code> <span className={styles[tone]}>{word}</span>
          </li>
        );
      })}
    </ul>
  );
}

/** A plan's summary as the agent proposed it, and the reviewer's version when they edited it. */
export function PlanSummary({ batch }: { batch: BatchView }) {
  if (batch.kind !== "plan" || !batch.plan) return null;
  const edited = editsOf(batch)
    .map(({ editedArgs }) => (editedArgs as { summary?: unknown }).summary)
    .find((summary): summary is string => typeof summary === "string");
  const changed = edited !== undefined && edited !== batch.plan.summary;
  return (
    <div className={styles.plan} data-testid="history-plan-summary">
      <p>
        <span className={styles.planLabel}>{changed ? "Proposed:" : "Plan:"}</span>{" "}
        {changed ? <del>{batch.plan.summary}</del> : batch.plan.summary}
      </p>
      {changed && (
        <p data-testid="history-plan-edited">
          <span className={styles.planLabel}>Approved as:</span> <ins>{edited}</ins>
        </p>
      )}
    </div>
  );
}

/**
 * Under a batch's row: each edited call's diff (the agent's args against what was approved), by
 * whom and when, behind a disclosure so the table stays scannable.
 */
export function EditDetails({ batch, now }: { batch: BatchView; now: number }) {
  const edits = editsOf(batch);
  if (edits.length === 0) return null;
  return (
    <>
      {edits.map(({ call, editedArgs }) => (
        <details key={call.id} className={styles.edit} data-testid="history-edit">
          <summary>
            <code>{call.toolName}</code> was edited before approval
            {call.decision?.by ? ` by ${call.decision.by.name}` : ""}
            {call.decision?.at && (
              <>
                {", "}
                <Time iso={call.decision.at} now={now} variant="exact" />
              </>
            )}
          </summary>
          <DiffView
            before={call.args}
            after={editedArgs}
            label={`${call.toolName}: the agent's args against the approved ones`}
          />
        </details>
      ))}
    </>
  );
}
