"use client";

import { useState, type FormEvent } from "react";
import styles from "@/app/(auth)/auth.module.css";
import { redeemLinkAction } from "@/app/(auth)/invite/actions";
import { authClient } from "@/components/auth-client";

/** Sets the password a one-time link is for, then signs in with it. */
export function SetPasswordForm({ token, email }: { token: string; email: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = String(form.get("password"));
    if (password !== String(form.get("confirm"))) {
      setError("The two passwords differ.");
      return;
    }
    setBusy(true);
    setError(null);
    const result = await redeemLinkAction({ token, password });
    if (!result.ok) {
      setBusy(false);
      // Worded for people (app/action-result.ts); a too-short password reads "Must be at least 8 characters."
      setError(result.fieldErrors ? Object.values(result.fieldErrors).join(" ") : result.message);
      return;
    }
    const signedIn = await authClient.signIn.email({ email: result.email, password });
    window.location.assign(signedIn.error ? "/sign-in" : "/queue");
  }

  return (
    <form className={styles.form} onSubmit={submit}>
      <input type="hidden" name="username" value={email} autoComplete="username" />
      <div className={styles.field}>
        <label htmlFor="password">New password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={8}
          maxLength={128}
          required
          autoFocus
        />
        <span className={styles.hint}>At least 8 characters.</span>
      </div>
      <div className={styles.field}>
        <label htmlFor="confirm">Repeat it</label>
        <input
          id="confirm"
          name="confirm"
          type="password"
          autoComplete="new-password"
          minLength={8}
          maxLength={128}
          required
        />
      </div>
      {error && (
        <p className={styles.error} role="alert">
          {error}
        </p>
      )}
      <button className={styles.submit} type="submit" disabled={busy}>
        {busy ? "Saving…" : "Set password and sign in"}
      </button>
    </form>
  );
}
