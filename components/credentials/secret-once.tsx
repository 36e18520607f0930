"use client";

import { useState } from "react";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { Time } from "@/components/time/time";
import styles from "./credentials.module.css";

/** A secret shown the one time it exists in the clear, with a copy button. */
export function SecretOnce({
  title,
  secret,
  note,
  onDone,
}: {
  title: string;
  secret: string;
  note: string;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <section className={styles.secret} aria-labelledby="secret-title" data-testid="secret-once">
      <p id="secret-title" className={styles.secretTitle}>
        {title}
      </p>
      <div className={styles.secretRow}>
        <code className={styles.secretValue} data-testid="secret-value">
          {secret}
        </code>
        <button
          type="button"
          className={settings.secondary}
          onClick={async () => {
            await navigator.clipboard?.writeText(secret).catch(() => undefined);
            setCopied(true);
          }}
        >
          Copy
        </button>
        <button type="button" className={settings.primary} onClick={onDone}>
          Done
        </button>
      </div>
      <p className={styles.secretNote} role="status">
        {copied ? "Copied. " : ""}
        {note}
      </p>
    </section>
  );
}

/** "25 Nov, 16:05" over "3 min ago" for tables, in the viewer's zone, the exact time on hover. */
export function When({ at }: { at: string | null }) {
  if (!at) return <span className={settings.muted}>never</span>;
  return (
    <span className={styles.nowrap}>
      <Time iso={at} variant="short" />
    </span>
  );
}
