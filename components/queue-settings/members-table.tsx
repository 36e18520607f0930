"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { changeRoleAction, removeMemberAction } from "@/app/(reviewer)/queues/actions";
import type { ActionFailure } from "@/app/action-result";
import { QUEUE_ROLES, type QueueRole } from "@/db/schema";
import type { QueueDetailView, QueueMemberView } from "@/lib/queues/queue-views";
import { FormError } from "./form-error";
import { ROLE_LABEL } from "./format";
import styles from "./queue-settings.module.css";
import { ScrollBox } from "@/components/app-shell/scroll-box";

/**
 * The members; a lead or an admin changes roles (saved on change) and removes members. A lead sees
 * admins read-only and cannot grant admin, as the verbs enforce.
 */
export function MembersTable({ queue }: { queue: QueueDetailView }) {
  const router = useRouter();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [notice, setNotice] = useState("");
  const [pending, startTransition] = useTransition();
  const { canManage, isAdmin } = queue.access;
  const manageable = (member: QueueMemberView) => canManage && (isAdmin || member.role !== "admin");
  // an archived queue takes no role changes, but access to it can always be taken away
  const editable = (member: QueueMemberView) => manageable(member) && queue.archivedAt === null;
  const grantable = QUEUE_ROLES.filter((role) => isAdmin || role !== "admin");

  function run(work: () => Promise<{ ok: true } | ActionFailure>, done: string) {
    setNotice("");
    startTransition(async () => {
      const result = await work();
      if (!result.ok) setFailure(result);
      else {
        setFailure(null);
        setNotice(done);
      }
      router.refresh();
    });
  }

  return (
    <>
      <FormError failure={failure} />
      <p role="status" className={styles.status}>
        {notice}
      </p>
      <ScrollBox label={`Members of ${queue.name}`} className={styles.tableWrap}>
        <table className={styles.table}>
          <caption className="visually-hidden">Members of {queue.name}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              {canManage && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {queue.members.map((member) => (
              <tr key={member.userId} data-testid="member-row" data-user-id={member.userId}>
                <td>{member.name}</td>
                <td className={styles.muted}>{member.email}</td>
                <td>
                  {editable(member) ? (
                    <select
                      aria-label={`Role of ${member.name}`}
                      className={styles.inlineSelect}
                      value={member.role}
                      disabled={pending}
                      onChange={(event) => {
                        const role = event.target.value as QueueRole;
                        run(
                          () => changeRoleAction(queue.id, member.userId, role),
                          `${member.name} is now ${ROLE_LABEL[role].toLowerCase()}.`,
                        );
                      }}
                    >
                      {(grantable.includes(member.role) ? grantable : QUEUE_ROLES).map((role) => (
                        <option key={role} value={role}>
                          {ROLE_LABEL[role]}
                        </option>
                      ))}
                    </select>
                  ) : (
                    ROLE_LABEL[member.role]
                  )}
                </td>
                {canManage && (
                  <td className={styles.actions}>
                    {manageable(member) && (
                      <button
                        type="button"
                        className={styles.danger}
                        disabled={pending}
                        aria-label={`Remove ${member.name}`}
                        onClick={() =>
                          run(
                            () => removeMemberAction(queue.id, member.userId),
                            `${member.name} was removed.`,
                          )
                        }
                      >
                        Remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}
