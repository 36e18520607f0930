"use client";

import { useState, type FormEvent } from "react";
import { authClient } from "@/components/auth-client";
import styles from "../auth.module.css";
import { createFirstAdminAction } from "./actions";

export function SetupForm() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function setUp(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const input = {
      setupCode: String(form.get("setupCode")),
      name: String(form.get("name")),
      email: String(form.get("email")),
      password: String(form.get("password")),
    };
    setBusy(true);
    setError(null);
    const created = await createFirstAdminAction(input);
    if (!created.ok) {
      setBusy(false);
      setError(
        created.issues?.length
          ? created.issues.map((i) => `${i.path}: ${i.message}`).join("; ")
          : created.message,
      );
      return;
    }
    const { error } = await authClient.signIn.email({
      email: input.email,
      password: input.password,
    });
    window.location.assign(error ? "/sign-in" : "/queue");
  }

  return (
    <form className={styles.form} onSubmit={setUp}>
      <div className={styles.field}>
        <label htmlFor="setupCode">Setup code</label>
        <input
          id="setupCode"
          name="setupCode"
          autoComplete="off"
          autoCapitalize="characters"
          spellCheck={false}
          required
          autoFocus
          maxLength={100}
          aria-describedby="setupCode-hint"
        />
        <span id="setupCode-hint" className={styles.hint}>
          Printed in the console where the server was started (<code>npm start</code>).
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="name">Your name</label>
        <input id="name" name="name" autoComplete="name" required maxLength={100} />
        <span className={styles.hint}>Shown on every decision you make.</span>
      </div>
      <div className={styles.field}>
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required />
      </div>
      <div className={styles.field}>
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={8}
          required
        />
        <span className={styles.hint}>At least 8 characters.</span>
      </div>
      {error && (
        <p className={styles.error} role="alert">
          {error}
        </p>
      )}
      <button className={styles.submit} type="submit" disabled={busy}>
        {busy ? "Creating…" : "Create admin and sign in"}
      </button>
    </form>
  );
}
