import Link from "next/link";
import styles from "@/components/run-timeline/run-timeline.module.css";

export default function RunNotFound() {
  return (
    <div className={styles.notFound}>
      <h1>Run not found</h1>
      <p>
        This run does not exist, or none of its approvals went to a queue you belong to. Check the
        link, or ask a lead to add you to the queue.
      </p>
      <div className={styles.notFoundLinks}>
        <Link href="/queue">Go to your queue</Link>
        <Link href="/history">Browse history</Link>
      </div>
    </div>
  );
}
