"use client";

import { useViewerTimeFormat } from "@/components/time/time-zone-provider";
import { formatDateTime } from "@/lib/time/format";
import { useState, useTransition } from "react";
import {
  invitePersonAction,
  passwordResetAction,
  updatePersonAction,
} from "@/app/(reviewer)/people/actions";
import styles from "@/components/credentials/credentials.module.css";
import { SecretOnce, When } from "@/components/credentials/secret-once";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import { RowConfirm, useConfirmRows } from "@/components/queue-settings/confirm-action";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { useActionOutcome } from "@/components/queue-settings/use-action-outcome";
import { Badge, type Tone } from "@/components/run-timeline/badges";
import type { PersonStatus, PersonView } from "@/lib/people/list-people";
import own from "./people.module.css";
import { ScrollBox } from "@/components/app-shell/scroll-box";

type QueueOption = { id: string; name: string };

const STATUS: Record<PersonStatus, { label: string; tone: Tone }> = {
  active: { label: "Active", tone: "ok" },
  invited: { label: "Invited", tone: "info" },
  deactivated: { label: "Deactivated", tone: "neutral" },
};

/**
 * People for admins (everyone) and leads (the members of their queues): invite by a one-time
 * link (shown once), create with a password (admins), rename, reset a password by a one-time
 * link, deactivate and reactivate (admins).
 */
export function People({
  people,
  queues,
  isAdmin,
  viewerId,
}: {
  people: PersonView[];
  queues: QueueOption[];
  isAdmin: boolean;
  viewerId: string;
}) {
  const { failure, status, done } = useActionOutcome();
  const [link, setLink] = useState<{ title: string; url: string; note: string } | null>(null);
  const timeFormat = useViewerTimeFormat();
  const [renaming, setRenaming] = useState<string | null>(null);
  const [withPassword, setWithPassword] = useState(false);
  // The invite form's refusal is said in the form, in the server's plain words (not the
  // browser's bubbles: the form is noValidate).
  const [inviteFailure, setInviteFailure] = useState<ActionFailure | null>(null);
  const transition = useTransition();
  const [pending, startTransition] = transition;
  const rows = useConfirmRows(transition);

  function invite(form: HTMLFormElement) {
    const data = new FormData(form);
    const queueId = String(data.get("queueId") ?? "");
    const input = {
      email: String(data.get("email") ?? ""),
      name: String(data.get("name") ?? ""),
      queues: queueId ? [{ queueId, role: String(data.get("role") ?? "reviewer") }] : [],
      ...(withPassword ? { password: String(data.get("password") ?? "") } : {}),
    };
    startTransition(async () => {
      const result = await invitePersonAction(input);
      if (!result.ok) return setInviteFailure(result);
      setInviteFailure(null);
      if (result.ok) {
        form.reset();
        if (result.invite)
          setLink({
            title: `The invite link of ${result.person.name}`,
            url: result.invite.url,
            note: `Copy it now and send it to ${result.person.email}: it is shown only this once, works once, until ${formatDateTime(result.invite.expiresAt, timeFormat)}.`,
          });
      }
      done(
        result,
        result.ok
          ? result.invite
            ? `Invited ${result.person.email}.`
            : `Created ${result.person.email}; they can sign in now.`
          : "",
      );
    });
  }

  async function updatePerson(
    person: PersonView,
    input: { name?: string; active?: boolean },
    message: string,
  ) {
    const result = await updatePersonAction(person.id, input);
    setRenaming(null);
    done(result, message);
  }

  function update(person: PersonView, input: { name?: string; active?: boolean }, message: string) {
    startTransition(() => updatePerson(person, input, message));
  }

  function reset(person: PersonView) {
    startTransition(async () => {
      const result = await passwordResetAction(person.id);
      if (result.ok)
        setLink({
          title: `The password reset link of ${person.name}`,
          url: result.link.url,
          note: `Copy it now and send it to ${person.email}: it is shown only this once, works once, until ${formatDateTime(result.link.expiresAt, timeFormat)}. Their sessions end when they use it.`,
        });
      done(result, result.ok ? `Made a password reset link for ${person.email}.` : "");
    });
  }

  return (
    <>
      {link && (
        <SecretOnce
          title={link.title}
          secret={link.url}
          note={link.note}
          onDone={() => setLink(null)}
        />
      )}
      <FormError failure={failure} />
      <p className={settings.status} role="status" data-testid="people-status">
        {status}
      </p>

      <ScrollBox label="People" className={settings.tableWrap}>
        <table className={`${settings.table} stack-table`}>
          <caption className="visually-hidden">People</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Queues</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {people.map((person) => (
              <tr
                key={person.id}
                data-testid="person-row"
                data-email={person.email}
                className={person.status === "deactivated" ? settings.muted : undefined}
              >
                <td data-cell="name">
                  {renaming === person.id ? (
                    <form
                      className={settings.rowButtons}
                      onSubmit={(event) => {
                        event.preventDefault();
                        const name = String(new FormData(event.currentTarget).get("name") ?? "");
                        update(person, { name }, `Renamed ${person.email} to ${name}.`);
                      }}
                    >
                      <label className="visually-hidden" htmlFor={`rename-${person.id}`}>
                        New name of {person.email}
                      </label>
                      <input
                        id={`rename-${person.id}`}
                        name="name"
                        defaultValue={person.name}
                        required
                        maxLength={100}
                        autoFocus
                      />
                      <button type="submit" className={settings.primary} disabled={pending}>
                        Save
                      </button>
                      <button
                        type="button"
                        className={settings.secondary}
                        onClick={() => setRenaming(null)}
                      >
                        Cancel
                      </button>
                    </form>
                  ) : (
                    <strong>{person.name}</strong>
                  )}
                </td>
                <td className={own.email} data-label="Email">
                  {person.email}
                </td>
                <td data-label="Queues">
                  {person.queues.length === 0 ? (
                    <span className={settings.muted}>none</span>
                  ) : (
                    person.queues.map((q) => `${q.name} (${q.role})`).join(", ")
                  )}
                </td>
                <td data-label="Last sign-in">
                  <When at={person.lastSignInAt} />
                </td>
                <td className={styles.nowrap} data-label="Status">
                  <Badge tone={STATUS[person.status].tone}>{STATUS[person.status].label}</Badge>
                </td>
                <td className={own.actions} data-cell="actions">
                  <span className={settings.rowButtons}>
                    {isAdmin && renaming !== person.id && (
                      <button
                        type="button"
                        className={settings.secondary}
                        disabled={pending}
                        onClick={() => setRenaming(person.id)}
                        aria-label={`Rename ${person.name}`}
                      >
                        Rename…
                      </button>
                    )}
                    {person.status !== "deactivated" && (
                      <button
                        type="button"
                        className={settings.secondary}
                        disabled={pending}
                        onClick={() => reset(person)}
                        aria-label={`Reset the password of ${person.name}`}
                      >
                        Reset password
                      </button>
                    )}
                    {isAdmin &&
                      person.id !== viewerId &&
                      (person.status === "deactivated" ? (
                        <button
                          type="button"
                          className={settings.secondary}
                          disabled={pending}
                          onClick={() =>
                            update(person, { active: true }, `Reactivated ${person.email}.`)
                          }
                          aria-label={`Reactivate ${person.name}`}
                        >
                          Reactivate
                        </button>
                      ) : (
                        <RowConfirm
                          row={person.id}
                          verb="Deactivate"
                          ariaLabel={`Deactivate ${person.name}`}
                          rows={rows}
                          onConfirm={() =>
                            updatePerson(
                              person,
                              { active: false },
                              `Deactivated ${person.email}: signed out everywhere, tokens revoked.`,
                            )
                          }
                        />
                      ))}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>

      <section className={`${settings.panel} ${own.invite}`} aria-labelledby="invite-title">
        <h2 id="invite-title" className={settings.panelTitle}>
          Invite someone
        </h2>
        <FormError failure={inviteFailure} />
        <form
          className={settings.formGrid}
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            invite(event.currentTarget);
          }}
        >
          <div className={settings.field}>
            <label htmlFor="invite-email">Email</label>
            <input id="invite-email" name="email" type="email" required autoComplete="off" />
          </div>
          <div className={settings.field}>
            <label htmlFor="invite-name">Name (shown on their decisions)</label>
            <input id="invite-name" name="name" required maxLength={100} autoComplete="off" />
          </div>
          <div className={settings.field}>
            <label htmlFor="invite-queue">Queue</label>
            <select id="invite-queue" name="queueId" required={!isAdmin}>
              {/* A queue first: an invite into no queue is the rare case, not the default. */}
              {queues.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.name}
                </option>
              ))}
              {isAdmin && <option value="">no queue yet</option>}
            </select>
          </div>
          <div className={settings.field}>
            <label htmlFor="invite-role">Role</label>
            <select id="invite-role" name="role">
              <option value="reviewer">reviewer</option>
              <option value="lead">lead</option>
              {isAdmin && <option value="admin">admin</option>}
            </select>
          </div>
          {isAdmin && (
            <label className={`${settings.check} ${settings.fullRow}`}>
              <input
                type="checkbox"
                checked={withPassword}
                onChange={(event) => setWithPassword(event.target.checked)}
              />
              Create the account with a password instead of an invite link
            </label>
          )}
          {withPassword && (
            <div className={settings.field}>
              <label htmlFor="invite-password">Password</label>
              <input
                id="invite-password"
                name="password"
                type="password"
                minLength={8}
                maxLength={128}
                required
                autoComplete="new-password"
              />
            </div>
          )}
          <div className={settings.formActions}>
            <button type="submit" className={settings.primary} disabled={pending}>
              {withPassword ? "Create account" : "Make invite link"}
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
