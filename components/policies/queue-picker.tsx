"use client";

import { useRouter } from "next/navigation";
import styles from "./policies.module.css";

/** Which queue's rules the page shows; the choice lives in the URL (?queue=ID). */
export function QueuePicker({
  queues,
  current,
  path = "/policies",
}: {
  queues: { id: string; name: string }[];
  current: string | null;
  /** the page the choice reloads */
  path?: string;
}) {
  const router = useRouter();
  return (
    <div className={styles.picker}>
      <label htmlFor="policy-queue">Queue</label>
      <select
        id="policy-queue"
        value={current ?? ""}
        onChange={(event) => router.push(`${path}?queue=${encodeURIComponent(event.target.value)}`)}
      >
        {current === null && (
          <option value="" disabled>
            Choose a queue…
          </option>
        )}
        {queues.map((queue) => (
          <option key={queue.id} value={queue.id}>
            {queue.name}
          </option>
        ))}
      </select>
    </div>
  );
}
