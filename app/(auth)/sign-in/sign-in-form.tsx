"use client";

import { useState, type FormEvent } from "react";
import { authClient } from "@/components/auth-client";
import { safeNextPath } from "@/lib/http/safe-next";
import styles from "../auth.module.css";

/**
 * The password form. `thenSso`: single sign-on was refused until this account's password is
 * proven (lib/sso/sso-sign-in.ts, admitToAccount), so a successful password sign-in goes straight
 * on to single sign-on in this browser, which links the two.
 */
export function SignInForm({ next, thenSso = false }: { next: string; thenSso?: boolean }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function signIn(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const { error } = await authClient.signIn.email({
      email: String(form.get("email")),
      password: String(form.get("password")),
    });
    if (error) {
      setBusy(false);
      setError(
        error.status === 429
          ? "Too many attempts. Wait a minute and try again."
          : "That email and password do not match an account.",
      );
      return;
    }
    // Checked again here: this component may be handed `next` by another page than the one that
    // checked it.
    const target = safeNextPath(next, window.location.origin);
    if (thenSso) {
      const { error: ssoError } = await authClient.signIn.social({
        provider: "sso",
        callbackURL: target,
        errorCallbackURL: `/sign-in?next=${encodeURIComponent(target)}`,
      });
      if (!ssoError) return; // on its way to the identity provider
    }
    // A full navigation, so the server renders the app with the new session.
    window.location.assign(target);
  }

  return (
    <form className={styles.form} onSubmit={signIn}>
      <div className={styles.field}>
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required autoFocus />
      </div>
      <div className={styles.field}>
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
        />
      </div>
      {error && (
        <p className={styles.error} role="alert">
          {error}
        </p>
      )}
      <button className={styles.submit} type="submit" disabled={busy}>
        {busy ? "Signing in…" : thenSso ? "Sign in and link single sign-on" : "Sign in"}
      </button>
    </form>
  );
}
