"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { updateQueueAction } from "@/app/(reviewer)/queues/actions";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import type { QueueDetailView } from "@/lib/queues/queue-views";
import { FormError } from "./form-error";
import { CLAIM_MODE_OPTIONS, numberField } from "./format";
import styles from "./queue-settings.module.css";

const FIELDS = [
  "name",
  "requiredApprovals",
  "defaultTimeoutSecs",
  "escalationQueueId",
  "claimMode",
  "approveOnTimeoutMinSecs",
  "slackChannelId",
] as const;

export type EscalationOption = { id: string; name: string };

/** A lead's or an admin's view of the settings: every field editable, saved together. */
export function SettingsForm({
  queue,
  escalationOptions,
}: {
  queue: QueueDetailView;
  escalationOptions: EscalationOption[];
}) {
  const router = useRouter();
  const errors = useFieldErrors(FIELDS);
  const [saved, setSaved] = useState(false);
  const [pending, startTransition] = useTransition();
  const disabled = queue.archivedAt !== null;

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setSaved(false);
    startTransition(async () => {
      const escalation = String(form.get("escalationQueueId") ?? "");
      const slack = String(form.get("slackChannelId") ?? "").trim();
      const result = await updateQueueAction(queue.id, {
        name: String(form.get("name") ?? ""),
        requiredApprovals: numberField(form.get("requiredApprovals")),
        separationOfDuties: form.get("separationOfDuties") === "on",
        defaultTimeoutSecs: numberField(form.get("defaultTimeoutSecs")),
        escalationQueueId: escalation === "" ? null : escalation,
        claimMode: String(form.get("claimMode") ?? "mark"),
        approveOnTimeout: form.get("approveOnTimeout") === "on",
        approveOnTimeoutMinSecs: numberField(form.get("approveOnTimeoutMinSecs")),
        slackChannelId: slack === "" ? null : slack,
      });
      if (!result.ok) return errors.fail(result);
      errors.reset();
      setSaved(true);
      router.refresh();
    });
  }

  return (
    // noValidate: the server's answer, worded per field, replaces the browser's bubbles.
    <form
      {...errors.formProps}
      onSubmit={submit}
      noValidate
      className={styles.formGrid}
      aria-describedby="settings-status"
    >
      <div className={styles.field}>
        <label htmlFor="queue-name">Name</label>
        <input
          id="queue-name"
          name="name"
          required
          maxLength={100}
          defaultValue={queue.name}
          {...errors.field("name", "queue-name")}
          disabled={disabled}
        />
        <FieldError controlId="queue-name" message={errors.errorOf("name")} />
      </div>
      <div className={styles.field}>
        <label htmlFor="queue-approvals">Approvals needed</label>
        <input
          id="queue-approvals"
          name="requiredApprovals"
          type="number"
          min={1}
          max={20}
          defaultValue={queue.requiredApprovals}
          {...errors.field("requiredApprovals", "queue-approvals", "queue-approvals-help")}
          disabled={disabled}
        />
        <FieldError controlId="queue-approvals" message={errors.errorOf("requiredApprovals")} />
        <span id="queue-approvals-help" className={styles.help}>
          From distinct reviewers, 1–20
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="queue-timeout">Default timeout (seconds)</label>
        <input
          id="queue-timeout"
          name="defaultTimeoutSecs"
          type="number"
          min={1}
          defaultValue={queue.defaultTimeoutSecs}
          {...errors.field("defaultTimeoutSecs", "queue-timeout", "queue-timeout-help")}
          disabled={disabled}
        />
        <FieldError controlId="queue-timeout" message={errors.errorOf("defaultTimeoutSecs")} />
        <span id="queue-timeout-help" className={styles.help}>
          When the agent sets no deadline
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="queue-escalation">Escalates to</label>
        <select
          id="queue-escalation"
          name="escalationQueueId"
          defaultValue={queue.escalationQueueId ?? ""}
          {...errors.field("escalationQueueId", "queue-escalation")}
          disabled={disabled}
        >
          <option value="">No escalation</option>
          {escalationOptions.map((option) => (
            <option key={option.id} value={option.id}>
              {option.name}
            </option>
          ))}
        </select>
        <FieldError controlId="queue-escalation" message={errors.errorOf("escalationQueueId")} />
      </div>
      <div className={`${styles.field} ${styles.wideField}`}>
        <label htmlFor="queue-claim-mode">Review claims</label>
        <select
          id="queue-claim-mode"
          name="claimMode"
          defaultValue={queue.claimMode}
          {...errors.field("claimMode", "queue-claim-mode", "queue-claim-mode-help")}
          disabled={disabled}
        >
          {CLAIM_MODE_OPTIONS.map((mode) => (
            <option key={mode.value} value={mode.value}>
              {mode.label}
            </option>
          ))}
        </select>
        <FieldError controlId="queue-claim-mode" message={errors.errorOf("claimMode")} />
        <span id="queue-claim-mode-help" className={styles.help}>
          What &ldquo;I&apos;m reviewing this&rdquo; does for others
        </span>
      </div>
      <div className={styles.check}>
        <input
          id="queue-sod"
          name="separationOfDuties"
          type="checkbox"
          defaultChecked={queue.separationOfDuties}
          aria-describedby="queue-sod-help"
          disabled={disabled}
        />
        <label htmlFor="queue-sod">Separation of duties</label>
        <span id="queue-sod-help" className={styles.help}>
          An agent&apos;s owner may not approve its calls
        </span>
      </div>
      <div className={styles.check}>
        <input
          id="queue-approve-on-timeout"
          name="approveOnTimeout"
          type="checkbox"
          defaultChecked={queue.approveOnTimeout}
          aria-describedby="queue-approve-on-timeout-help"
          disabled={disabled}
        />
        <label htmlFor="queue-approve-on-timeout">Agents may ask to approve on timeout</label>
        <span id="queue-approve-on-timeout-help" className={styles.help}>
          Off: a batch nobody decided is never approved at its deadline
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="queue-approve-min">Shortest timeout that may approve (seconds)</label>
        <input
          id="queue-approve-min"
          name="approveOnTimeoutMinSecs"
          type="number"
          min={1}
          defaultValue={queue.approveOnTimeoutMinSecs}
          {...errors.field(
            "approveOnTimeoutMinSecs",
            "queue-approve-min",
            "queue-approve-min-help",
          )}
          disabled={disabled}
        />
        <FieldError
          controlId="queue-approve-min"
          message={errors.errorOf("approveOnTimeoutMinSecs")}
        />
        <span id="queue-approve-min-help" className={styles.help}>
          A batch that approves on timeout must give reviewers at least this long
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="queue-slack-channel">Slack channel id</label>
        <input
          id="queue-slack-channel"
          name="slackChannelId"
          maxLength={42}
          placeholder="C0123ABCD"
          autoComplete="off"
          spellCheck={false}
          defaultValue={queue.slackChannelId ?? ""}
          {...errors.field("slackChannelId", "queue-slack-channel", "queue-slack-channel-help")}
          disabled={disabled}
        />
        <FieldError controlId="queue-slack-channel" message={errors.errorOf("slackChannelId")} />
        <span id="queue-slack-channel-help" className={styles.help}>
          New cards are posted there with Approve, Reject and Open buttons; empty: not posted. The
          channel&apos;s details show its id; invite the Countersign app to it.
        </span>
      </div>
      <div className={styles.formActions}>
        <button type="submit" className={styles.primary} disabled={pending || disabled}>
          {pending ? "Saving…" : "Save settings"}
        </button>
        <span id="settings-status" role="status" className={styles.status}>
          {saved ? "Saved." : ""}
        </span>
      </div>
      <div className={styles.fullRow}>
        <FormError failure={errors.formFailure} placed={errors.placed} />
      </div>
    </form>
  );
}
