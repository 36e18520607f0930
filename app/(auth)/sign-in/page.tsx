import type { Metadata } from "next";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { sessionUser } from "@/lib/auth/better-auth";
import { hasAnyUser } from "@/lib/auth/create-first-admin";
import styles from "../auth.module.css";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in · Countersign" };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string }>;
}) {
  // Nobody is left at a login page with no account: a fresh install goes to setup.
  if (!(await hasAnyUser())) redirect("/setup");
  const { next } = await searchParams;
  // Already signed in (a bookmark, the back button): straight on to the app.
  if (await sessionUser(await headers())) redirect(safeNext(next));
  return (
    <main className={styles.page}>
      <div className={styles.panel}>
        <p className={styles.brand}>Countersign</p>
        <h1>Sign in</h1>
        <p className={styles.lead}>Review what your agents want to do.</p>
        <SignInForm next={safeNext(next)} />
        <p className={styles.hint}>
          No account? An admin creates one with <code>npm run admin -- reviewer create</code>.
        </p>
      </div>
    </main>
  );
}

/** Only same-site paths, so the sign-in page cannot be used to bounce someone elsewhere. */
function safeNext(next: string | undefined): string {
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/queue";
}
