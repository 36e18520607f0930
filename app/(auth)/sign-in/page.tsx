import type { Metadata } from "next";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { sessionUser } from "@/lib/auth/better-auth";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { hasAnyUser } from "@/lib/admin/create-first-admin";
import { safeNextPath } from "@/lib/http/safe-next";
import styles from "../auth.module.css";
import { ssoButtonLabel } from "@/lib/sso/get-sso-settings";
import { PASSWORD_PROOF_REQUIRED, ssoErrorMessage } from "@/lib/sso/sign-in-errors";
import { SignInForm } from "./sign-in-form";
import { signedOutNote } from "./signed-out-note";
import { SsoButton } from "./sso-button";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in · Countersign" };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{
    next?: string | string[];
    error?: string | string[];
    "signed-out"?: string | string[];
    sessions?: string | string[];
    tokens?: string | string[];
  }>;
}) {
  // Nobody is left at a login page with no account: a fresh install goes to setup.
  if (!(await hasAnyUser())) redirect("/setup");
  // Only a path of this app, so a sign-in link cannot bounce someone to another site.
  const params = await searchParams;
  const next = safeNextPath(params.next, publicBaseUrl());
  const ssoLabel = await ssoButtonLabel();
  // Single sign-on comes back here with ?error=<code> when it is refused.
  const ssoError = ssoErrorMessage(params.error);
  const signedOut = signedOutNote(params);
  // Already signed in (a bookmark, the back button): straight on to the app.
  if (await sessionUser(await headers())) redirect(next);
  return (
    <main className={styles.page}>
      <div className={styles.panel}>
        <p className={styles.brand}>Countersign</p>
        <h1>Sign in</h1>
        <p className={styles.lead}>Review what your agents want to do.</p>
        {signedOut && (
          <p className={`${styles.notice} ${styles.banner}`} role="status" data-testid="signed-out">
            {signedOut}
          </p>
        )}
        {ssoError && (
          <p className={`${styles.error} ${styles.banner}`} role="alert" data-testid="sso-error">
            {ssoError}
          </p>
        )}
        {ssoLabel && (
          <>
            <SsoButton label={ssoLabel} next={next} />
            <p className={styles.divider}>or with your password</p>
          </>
        )}
        <SignInForm
          next={next}
          thenSso={ssoLabel !== null && params.error === PASSWORD_PROOF_REQUIRED}
        />
        <p className={styles.hint}>
          No account? Ask your team&apos;s lead or admin to invite you: they send you a link that
          sets your password.
        </p>
      </div>
    </main>
  );
}
