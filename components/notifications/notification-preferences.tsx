"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { saveNotificationPreferenceAction } from "@/app/(reviewer)/notifications/actions";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { FormError } from "@/components/queue-settings/form-error";
import { numberField } from "@/components/queue-settings/format";
import styles from "@/components/queue-settings/queue-settings.module.css";
import type { NotificationPreferenceView } from "@/lib/notifications/preferences";
import local from "./notifications.module.css";

const DELIVERIES = [
  { value: "immediate", label: "Immediately", help: "one email per card" },
  { value: "digest", label: "Digest", help: "one email every few minutes or hours" },
  { value: "off", label: "Off", help: "no email from this queue" },
] as const;

const EVENTS = [
  { key: "newCards", label: "New cards", help: "a card arrives in the queue" },
  { key: "deadlines", label: "Deadlines approaching", help: "a card has a fifth of its time left" },
  { key: "escalations", label: "Escalations", help: "a card is escalated into the queue" },
  {
    key: "decisions",
    label: "Decisions on cards I claimed",
    help: "someone else (or the deadline) decided a card you were reviewing",
  },
  {
    key: "suggestions",
    label: "Policy suggestions",
    help: "leads only, weekly: rules your reviewers have been applying by hand",
  },
] as const;

/** One form per queue: how and about what its emails come. */
export function NotificationPreferences({
  preferences,
  emailConfigured,
}: {
  preferences: NotificationPreferenceView[];
  emailConfigured: boolean;
}) {
  return (
    <>
      {!emailConfigured && (
        <p
          className={`${styles.note} ${local.note}`}
          role="note"
          data-testid="email-not-configured"
        >
          This server sends no email yet (an operator sets <code>SMTP_URL</code>). Your choices are
          kept and apply once it does.
        </p>
      )}
      {preferences.length === 0 ? (
        <div className={styles.empty} data-testid="no-queues">
          <p className={styles.emptyTitle}>You are not in any queue yet</p>
          <p className={styles.emptyText}>
            Notifications come from the queues you belong to. A queue&apos;s lead or an admin can
            add you to one.
          </p>
        </div>
      ) : (
        preferences.map((preference) => (
          <QueuePreferenceForm key={preference.queue.id} preference={preference} />
        ))
      )}
    </>
  );
}

const PREFERENCE_FIELDS = ["digestMinutes"] as const;

function QueuePreferenceForm({ preference }: { preference: NotificationPreferenceView }) {
  const router = useRouter();
  const [delivery, setDelivery] = useState(preference.delivery);
  const errors = useFieldErrors(PREFERENCE_FIELDS);
  const [status, setStatus] = useState("");
  const [pending, startTransition] = useTransition();
  const id = `queue-${preference.queue.id}`;

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setStatus("");
    startTransition(async () => {
      const minutes = String(form.get("digestMinutes") ?? "").trim();
      const result = await saveNotificationPreferenceAction(preference.queue.id, {
        delivery: String(form.get("delivery") ?? "off"),
        ...(minutes !== "" && { digestMinutes: numberField(minutes) }),
        events: Object.fromEntries(EVENTS.map((e) => [e.key, form.get(e.key) === "on"])),
      });
      if (!result.ok) return errors.fail(result);
      errors.reset();
      setStatus(`Saved for ${preference.queue.name}.`);
      router.refresh();
    });
  }

  return (
    <section
      className={styles.panel}
      aria-labelledby={`${id}-title`}
      data-testid="notification-queue"
    >
      <h2 id={`${id}-title`} className={styles.panelTitle}>
        {preference.queue.name}
      </h2>
      <form
        {...errors.formProps}
        onSubmit={submit}
        noValidate
        className={local.form}
        aria-describedby={`${id}-status`}
      >
        <fieldset className={local.group}>
          <legend>Send email</legend>
          {DELIVERIES.map((option) => (
            <label key={option.value} className={local.choice}>
              <input
                type="radio"
                name="delivery"
                value={option.value}
                checked={delivery === option.value}
                onChange={() => setDelivery(option.value)}
              />
              <span>
                {option.label} <span className={styles.help}>— {option.help}</span>
              </span>
            </label>
          ))}
          <div className={styles.field}>
            <label htmlFor={`${id}-minutes`}>Minutes between digests</label>
            <input
              id={`${id}-minutes`}
              name="digestMinutes"
              type="number"
              min={5}
              max={1440}
              defaultValue={preference.digestMinutes}
              disabled={delivery !== "digest"}
              {...errors.field("digestMinutes", `${id}-minutes`, `${id}-minutes-help`)}
              className={local.minutes}
            />
            <FieldError controlId={`${id}-minutes`} message={errors.errorOf("digestMinutes")} />
            <span id={`${id}-minutes-help`} className={styles.help}>
              5 to 1440 (a day)
            </span>
          </div>
        </fieldset>
        {/* Never disabled: a disabled fieldset's boxes leave the form data, which would clear them. */}
        <fieldset className={local.group}>
          <legend>About</legend>
          {EVENTS.map((event) => (
            <div key={event.key} className={styles.check}>
              <input
                id={`${id}-${event.key}`}
                name={event.key}
                type="checkbox"
                defaultChecked={preference.events[event.key]}
                aria-describedby={`${id}-${event.key}-help`}
              />
              <label htmlFor={`${id}-${event.key}`}>{event.label}</label>
              <span id={`${id}-${event.key}-help`} className={styles.help}>
                {event.help}
              </span>
            </div>
          ))}
        </fieldset>
        <div className={styles.formActions}>
          <button type="submit" className={styles.primary} disabled={pending}>
            {pending ? "Saving…" : "Save"}
            <span className="visually-hidden"> {preference.queue.name}</span>
          </button>
          <span id={`${id}-status`} role="status" className={styles.status}>
            {status}
          </span>
        </div>
        <FormError failure={errors.formFailure} placed={errors.placed} />
      </form>
    </section>
  );
}
