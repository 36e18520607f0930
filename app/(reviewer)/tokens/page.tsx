import type { Metadata } from "next";
import { ReviewerTokens, SignOutEverywhere } from "@/components/credentials/reviewer-tokens";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { getDb } from "@/db/client";
import { isInstallationAdmin } from "@/lib/queues/queue-access";
import { listReviewerTokens } from "@/lib/reviewer-tokens/reviewer-tokens";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Tokens and sessions · Countersign" };

export default async function TokensPage() {
  const reviewer = await currentReviewer();
  const [tokens, isAdmin] = await Promise.all([
    listReviewerTokens(reviewer),
    isInstallationAdmin(getDb(), reviewer.id),
  ]);
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>Tokens and sessions</h1>
          <p className={styles.lead}>
            {isAdmin
              ? "Every reviewer's personal tokens (you are an admin), and your sessions."
              : "Your personal tokens for scripts and embedding hosts, and your sessions."}
          </p>
        </div>
      </header>
      <ReviewerTokens tokens={tokens} showOwners={isAdmin} />
      <SignOutEverywhere />
    </>
  );
}
