"use client";

import { useState, type FormEvent } from "react";
import { authClient } from "@/components/auth-client";
import { FieldError } from "@/components/forms/field-error";
import { formLevelMessages, useFieldErrors } from "@/components/forms/use-field-errors";
import styles from "../auth.module.css";
import { createFirstAdminAction } from "./actions";

const FIELDS = ["setupCode", "name", "email", "password"] as const;

export function SetupForm() {
  const errors = useFieldErrors(FIELDS);
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
    errors.reset();
    const created = await createFirstAdminAction(input);
    if (!created.ok) {
      setBusy(false);
      errors.fail(created);
      return;
    }
    const { error } = await authClient.signIn.email({
      email: input.email,
      password: input.password,
    });
    window.location.assign(error ? "/sign-in" : "/queue");
  }

  const formMessage = formLevelMessages(errors.formFailure, errors.placed).join(" ");

  return (
    // noValidate: the server's answer, worded per field, replaces the browser's bubbles.
    <form {...errors.formProps} className={styles.form} onSubmit={setUp} noValidate>
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
          {...errors.field("setupCode", "setupCode", "setupCode-hint")}
        />
        <FieldError controlId="setupCode" message={errors.errorOf("setupCode")} />
        <span id="setupCode-hint" className={styles.hint}>
          Printed in the console where the server was started (<code>npm start</code>).
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="name">Your name</label>
        <input
          id="name"
          name="name"
          autoComplete="name"
          required
          maxLength={100}
          {...errors.field("name", "name", "name-hint")}
        />
        <FieldError controlId="name" message={errors.errorOf("name")} />
        <span id="name-hint" className={styles.hint}>
          Shown on every decision you make.
        </span>
      </div>
      <div className={styles.field}>
        <label htmlFor="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          required
          {...errors.field("email", "email")}
        />
        <FieldError controlId="email" message={errors.errorOf("email")} />
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
          {...errors.field("password", "password", "password-hint")}
        />
        <FieldError controlId="password" message={errors.errorOf("password")} />
        <span id="password-hint" className={styles.hint}>
          At least 8 characters.
        </span>
      </div>
      {formMessage && (
        <p className={styles.error} role="alert">
          {formMessage}
        </p>
      )}
      <button className={styles.submit} type="submit" disabled={busy}>
        {busy ? "Creating…" : "Create admin and sign in"}
      </button>
    </form>
  );
}
