import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { sessionReviewer } from "@/app/(reviewer)/current-reviewer";
import { CARD_LINK_PATH, openCardLink, type CardLinkOutcome } from "@/lib/email/card-links";
import styles from "../../auth.module.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = {
  title: "Open a card · Countersign",
  // the token must not travel on to another site in a Referer header
  referrer: "no-referrer",
};

const PROBLEMS: Record<
  Exclude<CardLinkOutcome["kind"], "open" | "sign_in">,
  { title: string; text: string }
> = {
  invalid: {
    title: "This link cannot be used",
    text: "The link is incomplete or was altered. Open the card from your queue instead.",
  },
  expired: {
    title: "This link has expired",
    text: "Links in notification emails work for a limited time. The card, if it still waits for you, is in your queue.",
  },
  used: {
    title: "This link was already used",
    text: "Each link in a notification email opens its card once. The card, if it still waits for you, is in your queue.",
  },
  someone_else: {
    title: "This link is for someone else",
    text: "It was sent to another reviewer. Sign out and in as them, or open your own queue.",
  },
  not_visible: {
    title: "This card is not in your queues",
    text: "You may have left its queue, or it moved to a queue you are not in.",
  },
};

/**
 * Where a card link in an email lands (lib/email/card-links.ts). It never decides anything: a
 * visitor without a session (a person, or a mail scanner following links) is sent to sign in and
 * back here; the person the link was sent to lands on the card, where they decide.
 */
export default async function CardLinkPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const outcome = await openCardLink(token, await sessionReviewer());
  if (outcome.kind === "sign_in")
    redirect(`/sign-in?next=${encodeURIComponent(`${CARD_LINK_PATH}/${token}`)}`);
  if (outcome.kind === "open") redirect(`/batches/${outcome.batchId}`);
  const problem = PROBLEMS[outcome.kind];
  return (
    <main className={styles.page}>
      <div className={styles.panel}>
        <p className={styles.brand}>Countersign</p>
        <h1>{problem.title}</h1>
        <p className={styles.lead} role="alert" data-testid="card-link-problem">
          {problem.text}
        </p>
        <p className={styles.hint}>
          <Link href="/queue">Open your queue</Link>
        </p>
      </div>
    </main>
  );
}
