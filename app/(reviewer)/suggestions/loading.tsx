import styles from "@/components/insights/insights.module.css";

// Mining a busy queue's month reads for a moment (test/bench/backtest.ts): the page's shape shows.
export default function LoadingSuggestions() {
  return (
    <div aria-busy="true" aria-live="polite">
      <p className="visually-hidden">Looking for rules in the queue&apos;s history…</p>
      <div
        className={styles.skeleton}
        style={{ height: "2.6rem", width: "14rem", marginBottom: "1rem" }}
      />
      <div className={styles.skeleton} style={{ height: "8rem", marginBottom: "1.25rem" }} />
      <div className={styles.skeleton} style={{ height: "8rem" }} />
    </div>
  );
}
