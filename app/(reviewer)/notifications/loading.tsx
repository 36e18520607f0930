import styles from "@/components/queue-settings/queue-settings.module.css";

export default function Loading() {
  return (
    <p className={styles.muted} role="status">
      Loading your notification settings…
    </p>
  );
}
