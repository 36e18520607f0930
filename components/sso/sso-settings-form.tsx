"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { saveSsoSettingsAction } from "@/app/(reviewer)/settings/sso/actions";
import { FieldError } from "@/components/forms/field-error";
import { useFieldErrors } from "@/components/forms/use-field-errors";
import { FormError } from "@/components/queue-settings/form-error";
import styles from "@/components/queue-settings/queue-settings.module.css";
import type { SsoGroupRole, SsoSettingsView } from "@/lib/sso/sso-settings";
import local from "./sso.module.css";

type QueueOption = { id: string; name: string };

/**
 * The admin's single sign-on settings. The client secret is never sent to the browser: its field
 * starts empty and, once one is stored, an empty field keeps it.
 */
const SSO_FIELDS = [
  "displayName",
  "issuer",
  "clientId",
  "clientSecret",
  "allowedDomains",
  "groupsClaim",
] as const;

export function SsoSettingsForm({
  current,
  redirectUri,
  queues,
}: {
  current: SsoSettingsView | null;
  redirectUri: string;
  queues: QueueOption[];
}) {
  const router = useRouter();
  const [mappings, setMappings] = useState<SsoGroupRole[]>(current?.groupRoles ?? []);
  const errors = useFieldErrors(SSO_FIELDS);
  const [status, setStatus] = useState("");
  const [pending, startTransition] = useTransition();
  // A new issuer needs the secret again (the stored one is sent only to the provider it was given
  // for) and retires every single sign-on link: the form says so as soon as the URL changes.
  const [issuer, setIssuer] = useState(current?.issuer ?? "");
  const issuerChanged = current !== null && issuer.trim().replace(/\/+$/, "") !== current.issuer;

  // onSubmit, not `action`: React resets a form after its action, and a refused entry must stay.
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    setStatus("");
    startTransition(async () => {
      const secret = text("clientSecret");
      const result = await saveSsoSettingsAction({
        enabled: form.get("enabled") === "on",
        displayName: text("displayName"),
        issuer: text("issuer"),
        clientId: text("clientId"),
        ...(secret !== "" && { clientSecret: secret }),
        allowedDomains: text("allowedDomains")
          .split(/[\s,]+/)
          .filter(Boolean),
        groupsClaim: text("groupsClaim") || "groups",
        groupRoles: mappings,
      });
      if (!result.ok) return errors.fail(result);
      errors.reset();
      setStatus(
        result.settings.enabled
          ? "Saved. The sign-in page offers single sign-on."
          : "Saved. Single sign-on is off.",
      );
      (event.target as HTMLFormElement).querySelector<HTMLInputElement>(
        "input[name=clientSecret]",
      )!.value = "";
      router.refresh();
    });
  }

  const update = (index: number, change: Partial<SsoGroupRole>) =>
    setMappings((all) => all.map((m, i) => (i === index ? { ...m, ...change } : m)));

  return (
    <section className={styles.panel} aria-labelledby="sso-title">
      <h2 id="sso-title" className={styles.panelTitle}>
        Identity provider
      </h2>
      <p className={styles.help}>
        Register this redirect URI with the provider:{" "}
        <code data-testid="sso-redirect-uri">{redirectUri}</code>
      </p>
      <form
        {...errors.formProps}
        onSubmit={submit}
        noValidate
        className={local.form}
        aria-describedby="sso-status"
      >
        <label className={styles.check}>
          <input type="checkbox" name="enabled" defaultChecked={current?.enabled ?? true} />
          Offer single sign-on on the sign-in page
        </label>
        <div className={styles.field}>
          <label htmlFor="sso-name">Button name</label>
          <input
            id="sso-name"
            name="displayName"
            required
            maxLength={60}
            defaultValue={current?.displayName ?? ""}
            placeholder="Acme SSO"
            {...errors.field("displayName", "sso-name", "sso-name-help")}
          />
          <FieldError controlId="sso-name" message={errors.errorOf("displayName")} />
          <span id="sso-name-help" className={styles.help}>
            Shown as “Sign in with …”.
          </span>
        </div>
        <div className={styles.field}>
          <label htmlFor="sso-issuer">Issuer URL</label>
          <input
            id="sso-issuer"
            name="issuer"
            type="url"
            required
            defaultValue={current?.issuer ?? ""}
            onChange={(event) => setIssuer(event.target.value)}
            placeholder="https://login.example.com"
            {...errors.field("issuer", "sso-issuer", "sso-issuer-help")}
          />
          <FieldError controlId="sso-issuer" message={errors.errorOf("issuer")} />
          <span id="sso-issuer-help" className={styles.help}>
            Its <code>/.well-known/openid-configuration</code> is checked when you save.
            {issuerChanged &&
              " Saving another issuer retires every single sign-on link made with the current one: people link again at their next sign-in, by the email the new provider verified."}
          </span>
        </div>
        <div className={styles.field}>
          <label htmlFor="sso-client-id">Client ID</label>
          <input
            id="sso-client-id"
            name="clientId"
            required
            defaultValue={current?.clientId ?? ""}
            autoComplete="off"
            {...errors.field("clientId", "sso-client-id")}
          />
          <FieldError controlId="sso-client-id" message={errors.errorOf("clientId")} />
        </div>
        <div className={styles.field}>
          <label htmlFor="sso-client-secret">Client secret</label>
          <input
            id="sso-client-secret"
            name="clientSecret"
            type="password"
            autoComplete="new-password"
            required={!current}

            placeholder={current && !issuerChanged ? "•••••••• (stored)" : ""}
            {...errors.field("clientSecret", "sso-client-secret", "sso-secret-help")}
          />
          <FieldError controlId="sso-client-secret" message={errors.errorOf("clientSecret")} />
          <span id="sso-secret-help" className={styles.help} data-testid="sso-secret-help">
            {!current
              ? "Stored encrypted when COUNTERSIGN_SECRET_KEY is set; never shown again."
              : issuerChanged
                ? "Required: the issuer changed. Enter the new provider's client secret."
                : "A secret is stored and never shown. Leave this empty to keep it (a new issuer, or a new token endpoint at this one, needs it again)."}
          </span>
        </div>
        <div className={styles.field}>
          <label htmlFor="sso-domains">Allowed email domains (optional)</label>
          <input
            id="sso-domains"
            name="allowedDomains"
            defaultValue={current?.allowedDomains.join(", ") ?? ""}
            placeholder="example.com"
            {...errors.field("allowedDomains", "sso-domains", "sso-domains-help")}
          />
          <FieldError controlId="sso-domains" message={errors.errorOf("allowedDomains")} />
          <span id="sso-domains-help" className={styles.help}>
            Empty: only people already in Countersign sign in. Otherwise anyone whose verified email
            is in these domains gets an account at their first sign-in.
          </span>
        </div>
        <div className={styles.field}>
          <label htmlFor="sso-claim">Groups claim</label>
          <input
            id="sso-claim"
            name="groupsClaim"
            defaultValue={current?.groupsClaim ?? "groups"}
            {...errors.field("groupsClaim", "sso-claim")}
          />
          <FieldError controlId="sso-claim" message={errors.errorOf("groupsClaim")} />
        </div>

        <fieldset className={local.mappings}>
          <legend>Group → queue roles</legend>
          <p className={styles.help}>
            Granted at each sign-in to members of the group; never lowered or removed here.
          </p>
          {mappings.length === 0 && <p className={styles.help}>No mappings.</p>}
          {mappings.map((mapping, index) => (
            <div key={index} className={local.mapping} data-testid="sso-mapping">
              <div className={styles.field}>
                <label htmlFor={`sso-group-${index}`}>Group</label>
                <input
                  id={`sso-group-${index}`}
                  value={mapping.group}
                  onChange={(e) => update(index, { group: e.target.value })}
                />
              </div>
              <div className={styles.field}>
                <label htmlFor={`sso-queue-${index}`}>Queue</label>
                <select
                  id={`sso-queue-${index}`}
                  value={mapping.queueId}
                  onChange={(e) => update(index, { queueId: e.target.value })}
                >
                  {queues.map((q) => (
                    <option key={q.id} value={q.id}>
                      {q.name}
                    </option>
                  ))}
                </select>
              </div>
              <div className={styles.field}>
                <label htmlFor={`sso-role-${index}`}>Role</label>
                <select
                  id={`sso-role-${index}`}
                  value={mapping.role}
                  onChange={(e) => update(index, { role: e.target.value as SsoGroupRole["role"] })}
                >
                  <option value="reviewer">reviewer</option>
                  <option value="lead">lead</option>
                </select>
              </div>
              <button
                type="button"
                className={styles.secondary}
                aria-label={`Remove mapping ${index + 1}${mapping.group ? ` (${mapping.group})` : ""}`}
                onClick={() => setMappings((all) => all.filter((_, i) => i !== index))}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            className={styles.secondary}
            disabled={queues.length === 0}
            onClick={() =>
              setMappings((all) => [
                ...all,
                { group: "", queueId: queues[0]!.id, role: "reviewer" },
              ])
            }
          >
            Add mapping
          </button>
        </fieldset>

        <FormError failure={errors.formFailure} placed={errors.placed} />
        <div className={styles.formActions}>
          <button className={styles.primary} type="submit" disabled={pending}>
            {pending ? "Checking the issuer…" : "Save"}
          </button>
          <span id="sso-status" role="status" className={styles.status}>
            {status}
          </span>
        </div>
      </form>
    </section>
  );
}
