"use client";

import { useId, useState, useTransition, type FormEvent } from "react";
import { tryPolicyAction, type TryPolicyResult } from "@/app/(reviewer)/policies/actions";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { FormError } from "@/components/queue-settings/form-error";
import { numberField } from "@/components/queue-settings/format";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { Badge, type Tone } from "@/components/run-timeline/badges";
import { EffectBadge } from "./effect-badge";
import styles from "./policies.module.css";

const OUTCOMES: Record<TryPolicyResult["outcome"], { label: string; tone: Tone }> = {
  approved: { label: "Approved at once", tone: "ok" },
  blocked: { label: "Blocked", tone: "danger" },
  rejected: { label: "Rejected", tone: "danger" },
  review: { label: "A reviewer decides", tone: "warn" },
};

// As the server names them: the form's fields are sent as `{ agent, call: { toolName, … } }`.
const FIELDS = ["call.toolName", "agent", "call.costEstimate", "call.args"] as const;

/**
 * "Try a call": what would happen to a tool call in this queue if an agent asked now, which
 * rule would decide, and why each rule did or did not match. Writes nothing.
 */
export function TryCall({ queue }: { queue: { id: string; name: string } }) {
  const id = useId();
  const errors = useFieldErrors(FIELDS);
  const [result, setResult] = useState<TryPolicyResult | null>(null);
  const [pending, startTransition] = useTransition();

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    // The arguments are checked here, as the server would only see what JSON.parse made of them.
    const argsProblem = (message: string) =>
      errors.fail({
        ok: false,
        code: "invalid_request",
        message,
        fieldErrors: { "call.args": message },
      });
    let args: unknown;
    try {
      args = JSON.parse(text("args") || "{}");
    } catch (error) {
      return argsProblem(`This is not valid JSON: ${(error as Error).message}.`);
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      return argsProblem('Enter the arguments as a JSON object, like {"path": "/tmp/notes.txt"}.');
    }
    errors.reset();
    const cost = text("costEstimate");
    const agent = text("agent");
    startTransition(async () => {
      const answer = await tryPolicyAction({
        queue: queue.id,
        ...(agent && { agent }),
        call: {
          toolName: text("toolName"),
          args,
          ...(cost && { costEstimate: numberField(cost) }),
        },
      });
      if (!answer.ok) {
        setResult(null);
        return errors.fail(answer);
      }
      errors.reset();
      setResult(answer.result);
    });
  }

  return (
    <section className={settings.panel} aria-labelledby="try-title" data-testid="try-call">
      <h2 id="try-title" className={settings.panelTitle}>
        Try a call
      </h2>
      <p className={styles.intro}>
        Paste a tool call to see what would happen to it in {queue.name} now, and why. Nothing is
        sent to anyone.
      </p>
      <FormError failure={errors.formFailure} placed={errors.placed} />
      {/* noValidate: the server's answer, worded per field, replaces the browser's bubbles. */}
      <form
        {...errors.formProps}
        onSubmit={submit}
        onChange={(event) => {
          // The controls' names are the form's; the errors are keyed as the server names them.
          const name = (event.target as { name?: string }).name;
          errors.clear(name === "agent" ? "agent" : `call.${name}`);
        }}
        noValidate
        className={settings.formGrid}
        aria-label="Try a call"
      >
        <div className={settings.field}>
          <label htmlFor={`${id}-tool`}>Tool name</label>
          <input
            id={`${id}-tool`}
            name="toolName"
            required
            maxLength={200}
            {...errors.field("call.toolName", `${id}-tool`)}
          />
          <FieldError controlId={`${id}-tool`} message={errors.errorOf("call.toolName")} />
        </div>
        <div className={settings.field}>
          <label htmlFor={`${id}-agent`}>Agent (optional)</label>
          <input
            id={`${id}-agent`}
            name="agent"
            maxLength={200}
            placeholder="name or key id"
            {...errors.field("agent", `${id}-agent`)}
          />
          <FieldError controlId={`${id}-agent`} message={errors.errorOf("agent")} />
        </div>
        <div className={settings.field}>
          <label htmlFor={`${id}-cost`}>Cost estimate (optional)</label>
          <input
            id={`${id}-cost`}
            name="costEstimate"
            type="number"
            min={0}
            step="any"
            {...errors.field("call.costEstimate", `${id}-cost`)}
          />
          <FieldError controlId={`${id}-cost`} message={errors.errorOf("call.costEstimate")} />
        </div>
        <div className={`${settings.field} ${settings.fullRow}`}>
          <label htmlFor={`${id}-args`}>Arguments (JSON)</label>
          <textarea
            id={`${id}-args`}
            name="args"
            rows={4}
            spellCheck={false}
            className={styles.json}
            defaultValue="{}"
            {...errors.field("call.args", `${id}-args`)}
          />
          <FieldError controlId={`${id}-args`} message={errors.errorOf("call.args")} />
        </div>
        <div className={settings.formActions}>
          <button type="submit" className={settings.primary} disabled={pending}>
            {pending ? "Checking…" : "Try it"}
          </button>
        </div>
      </form>
      {/* Present from the start, so a screen reader announces each new verdict. */}
      <div aria-live="polite">{result && <Verdict result={result} />}</div>
    </section>
  );
}

function Verdict({ result }: { result: TryPolicyResult }) {
  const outcome = OUTCOMES[result.outcome];
  return (
    <div className={styles.verdict} data-testid="try-result">
      <p className={styles.verdictHead}>
        <span data-testid="try-outcome" data-outcome={result.outcome}>
          <Badge tone={outcome.tone}>{outcome.label}</Badge>
        </span>
        <span data-testid="try-explanation">{result.explanation}</span>
      </p>
      {result.agentMode !== "ask" && (
        <p className={styles.intro}>
          The agent&apos;s mode is <strong>{result.agentMode}</strong>.
        </p>
      )}
      {result.checks.length === 0 ? (
        <p className={styles.none}>No rule that is on applies in this queue.</p>
      ) : (
        <>
          <h3 className={styles.checksTitle}>Rules considered, strongest first</h3>
          <ol className={styles.checks}>
            {result.checks.map((check) => {
              const decides = result.rule?.id === check.rule.id;
              return (
                <li
                  key={check.rule.id}
                  className={`${styles.check} ${decides ? styles.decides : ""}`}
                  data-testid="try-check"
                  data-matched={check.matched}
                >
                  <div className={styles.checkHead}>
                    <Mark held={check.matched} yes="matches:" no="does not match:" />
                    <span className={styles.ruleName}>{check.rule.name}</span>
                    <EffectBadge effect={check.rule.effect} />
                    {check.rule.queueId === null && (
                      <span className={styles.scope}>every queue</span>
                    )}
                    <span className={styles.checkStatus}>
                      {decides
                        ? "Decides"
                        : check.matched
                          ? "Matches, but a stronger rule decides"
                          : "Does not match"}
                    </span>
                  </div>
                  {check.conditions.length === 0 ? (
                    <p className={styles.conditionNone}>No conditions: it matches every call.</p>
                  ) : (
                    <ul className={styles.conditions}>
                      {check.conditions.map((condition, index) => (
                        <li key={index} data-testid="try-condition" data-held={condition.held}>
                          <Mark held={condition.held} />
                          {condition.condition}
                          {condition.why && (
                            <span className={styles.why} data-testid="try-why">
                              {" "}
                              — {condition.why}
                            </span>
                          )}
                        </li>
                      ))}
                    </ul>
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
    </div>
  );
}

type MarkProps = { held: boolean; yes?: string; no?: string };

function Mark({ held, yes = "holds:", no = "does not hold:" }: MarkProps) {
  return (
    <span className={held ? styles.yes : styles.no}>
      <span aria-hidden="true">{held ? "✓" : "✗"}</span>
      <span className="visually-hidden">{held ? yes : no}</span>
    </span>
  );
}
