"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { addMemberAction } from "@/app/(reviewer)/queues/actions";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { QUEUE_ROLES } from "@/db/schema";
import { FormError } from "./form-error";
import { ROLE_LABEL } from "./format";
import styles from "./queue-settings.module.css";

const FIELDS = ["email", "role"] as const;

/** Adds someone who already has an account, by email; only admins are offered the admin role. */
export function AddMemberForm({ queueId, isAdmin }: { queueId: string; isAdmin: boolean }) {
  const router = useRouter();
  const errors = useFieldErrors(FIELDS);
  const [notice, setNotice] = useState("");
  const [pending, startTransition] = useTransition();

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const data = new FormData(formElement);
    setNotice("");
    startTransition(async () => {
      const result = await addMemberAction(queueId, {
        email: String(data.get("email") ?? ""),
        role: String(data.get("role") ?? "reviewer"),
      });
      if (!result.ok) return errors.fail(result);
      errors.reset();
      setNotice(
        `${result.member.name} was added as ${ROLE_LABEL[result.member.role].toLowerCase()}.`,
      );
      formElement.reset();
      router.refresh();
    });
  }

  return (
    // noValidate: the server's answer, worded per field, replaces the browser's bubbles.
    <form
      {...errors.formProps}
      onSubmit={submit}
      noValidate
      className={styles.addMember}
      aria-label="Add a member"
    >
      <div className={styles.field}>
        <label htmlFor="member-email">Email</label>
        <input
          id="member-email"
          name="email"
          type="email"
          required
          autoComplete="off"
          {...errors.field("email", "member-email")}
        />
        <FieldError controlId="member-email" message={errors.errorOf("email")} />
      </div>
      <div className={styles.field}>
        <label htmlFor="member-role">Role</label>
        <select
          id="member-role"
          name="role"
          defaultValue="reviewer"
          {...errors.field("role", "member-role")}
        >
          {QUEUE_ROLES.filter((role) => isAdmin || role !== "admin").map((role) => (
            <option key={role} value={role}>
              {ROLE_LABEL[role]}
            </option>
          ))}
        </select>
        <FieldError controlId="member-role" message={errors.errorOf("role")} />
      </div>
      <div className={styles.formActions}>
        <button type="submit" className={styles.primary} disabled={pending}>
          {pending ? "Adding…" : "Add member"}
        </button>
      </div>
      <p role="status" className={`${styles.status} ${styles.fullRow}`}>
        {notice}
      </p>
      <div className={styles.fullRow}>
        <FormError failure={errors.formFailure} placed={errors.placed} />
      </div>
    </form>
  );
}
