"use client";

import { useRouter } from "next/navigation";
import { useTransition, type FormEvent } from "react";
import { createQueueAction } from "@/app/(reviewer)/queues/actions";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { FormError } from "./form-error";
import { CLAIM_MODE_OPTIONS, numberField } from "./format";
import styles from "./queue-settings.module.css";

const FIELDS = ["name", "requiredApprovals", "defaultTimeoutSecs", "claimMode"] as const;

/** Admins only: a new queue, then on to its settings page to add members. */
export function NewQueueForm() {
  const router = useRouter();
  const errors = useFieldErrors(FIELDS);
  const [pending, startTransition] = useTransition();

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    startTransition(async () => {
      const result = await createQueueAction({
        name: String(form.get("name") ?? ""),
        requiredApprovals: numberField(form.get("requiredApprovals")),
        separationOfDuties: form.get("separationOfDuties") === "on",
        defaultTimeoutSecs: numberField(form.get("defaultTimeoutSecs")),
        claimMode: String(form.get("claimMode") ?? "mark"),
      });
      if (!result.ok) return errors.fail(result);
      errors.reset();
      router.push(`/queues/${result.queue.id}`);
    });
  }

  return (
    <section className={styles.panel} aria-labelledby="new-queue-title">
      <h2 id="new-queue-title" className={styles.panelTitle}>
        New queue
      </h2>
      <FormError failure={errors.formFailure} placed={errors.placed} />
      {/* noValidate: the server's answer, worded per field, replaces the browser's bubbles. */}
      <form {...errors.formProps} onSubmit={submit} noValidate className={styles.formGrid}>
        <div className={styles.field}>
          <label htmlFor="new-queue-name">Name</label>
          <input
            id="new-queue-name"
            name="name"
            required
            maxLength={100}
            {...errors.field("name", "new-queue-name")}
          />
          <FieldError controlId="new-queue-name" message={errors.errorOf("name")} />
        </div>
        <div className={styles.field}>
          <label htmlFor="new-queue-approvals">Approvals needed</label>
          <input
            id="new-queue-approvals"
            name="requiredApprovals"
            type="number"
            min={1}
            max={20}
            defaultValue={1}
            {...errors.field("requiredApprovals", "new-queue-approvals")}
          />
          <FieldError
            controlId="new-queue-approvals"
            message={errors.errorOf("requiredApprovals")}
          />
        </div>
        <div className={styles.field}>
          <label htmlFor="new-queue-timeout">Default timeout (seconds)</label>
          <input
            id="new-queue-timeout"
            name="defaultTimeoutSecs"
            type="number"
            min={1}
            defaultValue={3600}
            {...errors.field("defaultTimeoutSecs", "new-queue-timeout")}
          />
          <FieldError
            controlId="new-queue-timeout"
            message={errors.errorOf("defaultTimeoutSecs")}
          />
        </div>
        <div className={`${styles.field} ${styles.wideField}`}>
          <label htmlFor="new-queue-claim-mode">Review claims</label>
          <select
            id="new-queue-claim-mode"
            name="claimMode"
            defaultValue="mark"
            {...errors.field("claimMode", "new-queue-claim-mode")}
          >
            {CLAIM_MODE_OPTIONS.map((mode) => (
              <option key={mode.value} value={mode.value}>
                {mode.label}
              </option>
            ))}
          </select>
          <FieldError controlId="new-queue-claim-mode" message={errors.errorOf("claimMode")} />
        </div>
        <div className={styles.check}>
          <input id="new-queue-sod" name="separationOfDuties" type="checkbox" />
          <label htmlFor="new-queue-sod">Separation of duties</label>
        </div>
        <div className={styles.formActions}>
          <button type="submit" className={styles.primary} disabled={pending}>
            {pending ? "Creating…" : "Create queue"}
          </button>
        </div>
      </form>
    </section>
  );
}
