import styles from "@/components/history/history.module.css";

export default function LoadingHistory() {
  return (
    <div aria-busy="true" aria-live="polite">
      <p className="visually-hidden">Loading history…</p>
      <div className={styles.header}>
        <div className={styles.skeleton} style={{ height: "2.2rem", width: "14rem" }} />
      </div>
      <div className={styles.skeleton} style={{ height: "8.5rem", marginBottom: "1rem" }} />
      <div className={styles.skeleton} style={{ height: "20rem" }} />
    </div>
  );
}
