import styles from "@/components/run-timeline/run-timeline.module.css";

export default function LoadingRun() {
  return (
    <div aria-busy="true" aria-live="polite">
      <p className="visually-hidden">Loading the run…</p>
      <div className={styles.header}>
        <div className={styles.skeleton} style={{ height: "1rem", width: "8rem" }} />
        <div className={styles.skeleton} style={{ height: "2rem", width: "20rem" }} />
      </div>
      <div className={styles.layout}>
        <div className={styles.main}>
          <div className={styles.skeleton} style={{ height: "7rem" }} />
          <div className={styles.skeleton} style={{ height: "16rem" }} />
        </div>
        <div className={styles.side}>
          <div className={styles.skeleton} style={{ height: "18rem" }} />
        </div>
      </div>
    </div>
  );
}
