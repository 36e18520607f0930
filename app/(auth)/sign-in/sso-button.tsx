"use client";

import { useState } from "react";
import { authClient } from "@/components/auth-client";
import { safeNextPath } from "@/lib/http/safe-next";
import styles from "../auth.module.css";

/**
 * Starts single sign-on: better-auth answers the identity provider's address (with its state and
 * PKCE challenge) and the client goes there. Whatever happens there comes back to this page:
 * `next` on success, `?error=` otherwise (explained by the page).
 */
export function SsoButton({ label, next }: { label: string; next: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function start() {
    setBusy(true);
    setError(null);
    const target = safeNextPath(next, window.location.origin);
    const { error } = await authClient.signIn.social({
      provider: "sso",
      callbackURL: target,
      errorCallbackURL: `/sign-in?next=${encodeURIComponent(target)}`,
    });
    if (error) {
      setBusy(false);
      setError(
        error.status === 429
          ? "Too many attempts. Wait a minute and try again."
          : `${label} cannot be reached just now. Try again, or sign in with your password.`,
      );
    }
  }

  return (
    <>
      <button className={styles.ssoButton} type="button" onClick={start} disabled={busy}>
        {busy ? "Redirecting…" : `Sign in with ${label}`}
      </button>
      {error && (
        <p className={styles.error} role="alert">
          {error}
        </p>
      )}
    </>
  );
}
