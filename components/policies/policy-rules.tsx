"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import {
  createPolicyRuleAction,
  deletePolicyRuleAction,
  movePolicyRuleAction,
  updatePolicyRuleAction,
} from "@/app/(reviewer)/policies/actions";
import type { ActionFailure, ActionResult } from "@/app/action-result";
import { Badge } from "@/components/run-timeline/badges";
import { FormError } from "@/components/queue-settings/form-error";
import settings from "@/components/queue-settings/queue-settings.module.css";
import type { PolicyRuleView } from "@/lib/policies/list-policy-rules";
import { EffectBadge } from "./effect-badge";
import styles from "./policies.module.css";
import { EditRule, NewRule } from "./rule-forms";
import { RuleButtons } from "@/components/queue-settings/rule-buttons";
import { RuleBacktest } from "./backtest-view";

/** A stored rule as the backtest takes it, tried on this queue's history, weighed without itself. */
function backtestInputOf(rule: PolicyRuleView, queueId: string) {
  return {
    rule: {
      name: rule.name,
      queue: rule.queue?.id ?? null,
      effect: rule.effect,
      agent: rule.agent?.id ?? null,
      toolPattern: rule.toolPattern,
      argPredicates: rule.argPredicates,
      costAbove: rule.costAbove,
    },
    queue: queueId,
    ruleId: rule.id,
  };
}

type Queue = { id: string; name: string };
/** where a failure is shown: under the new-rule form, in a rule's edit form, or over the lists */
type FailureAt = { at: string; failure: ActionFailure };

/**
 * The rules that apply in one queue, in two lists (its own, and those for every queue), each
 * in its own order: edit a rule in place, move it, turn it off and on, remove it; and the form
 * for a new one. Every change goes through a server action, then the page reloads its data.
 */
export function PolicyRules({
  queue,
  queueRules,
  globalRules,
  canManage,
  isAdmin,
}: {
  queue: Queue;
  queueRules: PolicyRuleView[];
  globalRules: PolicyRuleView[];
  canManage: boolean;
  isAdmin: boolean;
}) {
  const router = useRouter();
  const [failure, setFailure] = useState<FailureAt | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  /**
   * Runs an action; on success refreshes the page's data, on failure shows why, where it belongs:
   * in the form that sent it (`onFailure`), else at `at`.
   */
  function run(
    at: FailureAt["at"],
    action: () => Promise<ActionResult>,
    onDone?: () => void,
    onFailure?: (failure: ActionFailure) => void,
  ) {
    startTransition(async () => {
      const result = await action();
      if (!result.ok) {
        setFailure(null);
        return onFailure ? onFailure(result) : setFailure({ at, failure: result });
      }
      setFailure(null);
      onDone?.();
      router.refresh();
    });
  }
  const failureAt = (at: FailureAt["at"]) => (failure?.at === at ? failure.failure : null);

  const list = (rules: PolicyRuleView[]) => (
    <ol className={styles.rules}>
      {rules.map((rule, index) =>
        editing === rule.id ? (
          <li key={rule.id} className={styles.rule} data-testid="policy-rule">
            <EditRule
              rule={rule}
              pending={pending}
              onSave={(input, fail) =>
                run(
                  rule.id,
                  () => updatePolicyRuleAction(rule.id, input),
                  () => setEditing(null),
                  fail,
                )
              }
              onCancel={() => {
                setEditing(null);
                setFailure(null);
              }}
            />
          </li>
        ) : (
          <li
            key={rule.id}
            className={`${styles.rule} ${rule.enabled ? "" : styles.off}`}
            data-testid="policy-rule"
            data-rule-id={rule.id}
          >
            <span className={styles.order} aria-label={`Place ${index + 1}`}>
              {index + 1}
            </span>
            <div className={styles.ruleBody}>
              <div className={styles.ruleHead}>
                <span className={styles.ruleName} data-testid="policy-rule-name">
                  {rule.name}
                </span>
                <EffectBadge effect={rule.effect} />
                {rule.enabled ? (
                  <span className="visually-hidden">(on)</span>
                ) : (
                  <Badge tone="neutral">Off</Badge>
                )}
              </div>
              <p className={styles.ruleLine} data-testid="policy-conditions">
                <span className={styles.lineLabel}>When</span> {rule.conditions}
              </p>
              {rule.reason && (
                <p className={styles.ruleLine}>
                  <span className={styles.lineLabel}>Agent is told</span> {rule.reason}
                </p>
              )}
              {/* a backtest is authorized as changing the rule is: shown to those who may */}
              {canManage && (rule.queue !== null || isAdmin) && (
                <RuleBacktest label={rule.name} input={backtestInputOf(rule, queue.id)} />
              )}
            </div>
            {rule.canEdit && (
              <RuleButtons
                name={rule.name}
                enabled={rule.enabled}
                index={index}
                count={rules.length}
                earlier="listed earlier"
                later="listed later"
                disabled={pending}
                className={`${settings.rowButtons} ${styles.ruleButtons}`}
                onMove={(to) => run("lists", () => movePolicyRuleAction(rule.id, to))}
                onToggle={() =>
                  run("lists", () => updatePolicyRuleAction(rule.id, { enabled: !rule.enabled }))
                }
                onEdit={() => {
                  setFailure(null);
                  setEditing(rule.id);
                }}
                onRemove={() => run("lists", () => deletePolicyRuleAction(rule.id))}
              />
            )}
          </li>
        ),
      )}
    </ol>
  );

  return (
    <>
      <FormError failure={failureAt("lists")} />
      <section
        className={settings.panel}
        aria-labelledby="queue-rules-title"
        data-testid="queue-rules"
      >
        <h2 id="queue-rules-title" className={settings.panelTitle}>
          Rules of {queue.name}
        </h2>
        {queueRules.length > 0 ? (
          list(queueRules)
        ) : (
          <p className={styles.none}>
            No rules of this queue&apos;s own yet.
            {canManage && " Add one below."}
          </p>
        )}
      </section>
      <section
        className={settings.panel}
        aria-labelledby="global-rules-title"
        data-testid="global-rules"
      >
        <h2 id="global-rules-title" className={settings.panelTitle}>
          Rules for every queue
        </h2>
        {globalRules.length > 0 ? (
          list(globalRules)
        ) : (
          <p className={styles.none}>No rule applies in every queue.</p>
        )}
        {!isAdmin && globalRules.length > 0 && (
          <p className={settings.note}>Only an admin changes the rules for every queue.</p>
        )}
      </section>
      {canManage && (
        <NewRule
          queue={queue}
          isAdmin={isAdmin}
          pending={pending}
          onCreate={(input, done, fail) =>
            run("new", () => createPolicyRuleAction(input), done, fail)
          }
        />
      )}
    </>
  );
}
