"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { archiveQueueAction } from "@/app/(reviewer)/queues/actions";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "./form-error";
import styles from "./queue-settings.module.css";

/** Admins only, and asked twice: an archived queue takes no new work and cannot be edited. */
export function ArchiveControl({ queueId, name }: { queueId: string; name: string }) {
  const router = useRouter();
  const [confirming, setConfirming] = useState(false);
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [pending, startTransition] = useTransition();

  function archive() {
    startTransition(async () => {
      const result = await archiveQueueAction(queueId);
      if (!result.ok) return setFailure(result);
      setFailure(null);
      setConfirming(false);
      router.refresh();
    });
  }

  return (
    <div className={styles.archive}>
      {confirming ? (
        <>
          <p className={styles.archiveText}>
            Archive <strong>{name}</strong>? Its history and members stay, its settings can no
            longer change, and queues that escalate to it stop escalating.
          </p>
          <div className={styles.formActions}>
            <button type="button" className={styles.danger} onClick={archive} disabled={pending}>
              {pending ? "Archiving…" : "Archive queue"}
            </button>
            <button type="button" className={styles.secondary} onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </>
      ) : (
        <button type="button" className={styles.secondary} onClick={() => setConfirming(true)}>
          Archive this queue…
        </button>
      )}
      <FormError failure={failure} />
    </div>
  );
}
