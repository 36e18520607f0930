import styles from "@/components/insights/insights.module.css";

// The 90-day view of a busy installation reads for a moment (test/bench/insights.ts): the page's
// shape shows meanwhile.
export default function LoadingInsights() {
  return (
    <div aria-busy="true" aria-live="polite">
      <p className="visually-hidden">Loading insights…</p>
      <div
        className={styles.skeleton}
        style={{ height: "2.6rem", width: "14rem", marginBottom: "1rem" }}
      />
      <div className={styles.skeleton} style={{ height: "5rem", marginBottom: "1.25rem" }} />
      <div className={styles.skeleton} style={{ height: "5.5rem", marginBottom: "1.25rem" }} />
      <div className={styles.skeleton} style={{ height: "18rem" }} />
    </div>
  );
}
