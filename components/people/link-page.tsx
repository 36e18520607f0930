import Link from "next/link";
import styles from "@/app/(auth)/auth.module.css";
import { ApiError } from "@/lib/errors";
import { readLink, type LinkState } from "@/lib/people/person-links";
import { SetPasswordForm } from "./set-password-form";

/**
 * The page of a one-time link (an invite or a password reset): a form to choose a password, or
 * a plain page saying why the link cannot be used (unknown, used, expired).
 */
export async function LinkPage({ token, kind }: { token: string; kind: LinkState["kind"] }) {
  let state: LinkState | null = null;
  let problem: string | null = null;
  try {
    state = await readLink(token);
    if (state.kind !== kind) problem = "This link is not valid. Ask for a new one.";
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    problem =
      error.code === "not_found" ? "This link is not valid. Ask for a new one." : error.message;
  }
  const title = kind === "invite" ? "Welcome to Countersign" : "Choose a new password";
  return (
    <main className={styles.page}>
      <div className={styles.panel}>
        <p className={styles.brand}>Countersign</p>
        <h1>{problem ? "This link cannot be used" : title}</h1>
        {problem || !state ? (
          <>
            <p className={styles.lead} role="alert" data-testid="link-problem">
              {problem}
            </p>
            <p className={styles.hint}>
              An admin (or your queue&apos;s lead) can send you a new one.{" "}
              <Link href="/sign-in">Sign in</Link>
            </p>
          </>
        ) : (
          <>
            <p className={styles.lead}>
              {kind === "invite"
                ? `${state.name}, set a password for ${state.email} to start reviewing.`
                : `Set a new password for ${state.email}. You will be signed out everywhere else.`}
            </p>
            <SetPasswordForm token={token} email={state.email} />
          </>
        )}
      </div>
    </main>
  );
}
