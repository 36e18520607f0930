"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { createPolicyRuleAction, dismissSuggestionAction } from "@/app/(reviewer)/policies/actions";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import settings from "@/components/queue-settings/queue-settings.module.css";
import type { PolicySuggestions } from "@/lib/policies/suggest-policies";
import { BacktestDetails, formatDuration } from "./backtest-view";
import styles from "./policies.module.css";

type Suggestion = PolicySuggestions["suggestions"][number];

/** The suggestions of one queue, each with its backtest and its three actions. */
export function SuggestionList({
  queue,
  answer,
}: {
  queue: { id: string; name: string };
  answer: PolicySuggestions;
}) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [failure, setFailure] = useState<{ id: string; failure: ActionFailure } | null>(null);
  const [done, setDone] = useState<Record<string, string>>({});

  function act(s: Suggestion, what: "on" | "off" | "dismiss") {
    startTransition(async () => {
      const result =
        what === "dismiss"
          ? await dismissSuggestionAction({
              queue: queue.id,
              suggestionId: s.id,
              fingerprint: s.fingerprint,
            })
          : await createPolicyRuleAction({ ...s.rule, enabled: what === "on" });
      if (!result.ok) return setFailure({ id: s.id, failure: result });
      setFailure(null);
      setDone((d) => ({
        ...d,
        [s.id]:
          what === "dismiss"
            ? "Dismissed: it comes back only if the evidence changes."
            : `Rule “${s.rule.name}” created${what === "off" ? ", turned off" : ""}.`,
      }));
      router.refresh();
    });
  }

  // What was just done stays said after the refresh, also when it took the last suggestion away.
  const notes = Object.values(done).map((message) => (
    <p key={message} role="status" className={settings.note}>
      {message}
    </p>
  ));

  if (answer.suggestions.length === 0)
    return (
      <>
        {notes}
        <section className={settings.panel} data-testid="no-suggestions">
          <p className={styles.none}>
            Nothing to suggest for {queue.name}: no agent and tool was approved as asked{" "}
            {answer.minApprovals} times in the last 30 days without ever being rejected, edited or
            left to expire.
            {answer.dismissed > 0 &&
              ` (${answer.dismissed} dismissed ${answer.dismissed === 1 ? "suggestion is" : "suggestions are"} hidden.)`}
          </p>
        </section>
      </>
    );

  return (
    <>
      {notes}
      <ol className={styles.rules} aria-label={`Suggestions for ${queue.name}`}>
        {answer.suggestions.map((s) => (
          <li key={s.id} className={styles.rule} data-testid="suggestion">
            <div className={styles.ruleBody}>
              <h2 className={styles.suggestionName} data-testid="suggestion-name">
                {s.rule.name}
              </h2>
              <p className={styles.ruleLine}>
                <span className={styles.lineLabel}>Evidence</span> approved as asked{" "}
                {s.backtest.calls.approved} times by hand, never refused; about{" "}
                {formatDuration(s.backtest.cards.savedMs)} of reviewers&apos; time
              </p>
              <details>
                <summary>Backtest</summary>
                <BacktestDetails report={s.backtest} />
              </details>
              {failure?.id === s.id && <FormError failure={failure.failure} />}
            </div>
            <div className={`${settings.rowButtons} ${styles.ruleButtons}`}>
              <button
                type="button"
                className={settings.primary}
                disabled={pending || s.id in done}
                onClick={() => act(s, "on")}
              >
                Create rule
              </button>
              <button
                type="button"
                className={settings.secondary}
                disabled={pending || s.id in done}
                onClick={() => act(s, "off")}
              >
                Create, turned off
              </button>
              <button
                type="button"
                className={settings.secondary}
                disabled={pending || s.id in done}
                onClick={() => act(s, "dismiss")}
                aria-label={`Dismiss ${s.rule.name}`}
              >
                Dismiss
              </button>
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}
