"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import {
  createReviewerTokenAction,
  revokeReviewerTokenAction,
  signOutEverywhereAction,
} from "@/app/(reviewer)/tokens/actions";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import {
  ConfirmAction,
  RowConfirm,
  useConfirmRows,
} from "@/components/queue-settings/confirm-action";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { useActionOutcome } from "@/components/queue-settings/use-action-outcome";
import { Badge } from "@/components/run-timeline/badges";
import type { ReviewerTokenView } from "@/lib/reviewer-tokens/reviewer-tokens";
import styles from "./credentials.module.css";
import { SecretOnce, When } from "./secret-once";
import { ScrollBox } from "@/components/app-shell/scroll-box";

/**
 * Personal tokens (for scripts and embedding hosts) by prefix: create one (shown once), revoke
 * one. A reviewer sees their own; an admin everyone's, with whose they are.
 */
export function ReviewerTokens({
  tokens,
  showOwners,
}: {
  tokens: ReviewerTokenView[];
  showOwners: boolean;
}) {
  const { failure, status, done } = useActionOutcome();
  const [secret, setSecret] = useState<string | null>(null);
  const transition = useTransition();
  const [pending, startTransition] = transition;
  const rows = useConfirmRows(transition);

  return (
    <section className={settings.panel} aria-labelledby="tokens-title">
      <h2 id="tokens-title" className={settings.panelTitle}>
        Personal tokens
      </h2>
      {secret && (
        <SecretOnce
          title="Your new token"
          secret={secret}
          note="Copy it now: it is shown only this once (only its hash is kept). It acts as you: send it as 'Authorization: Bearer …'."
          onDone={() => setSecret(null)}
        />
      )}
      <FormError failure={failure} />
      <p className={settings.status} role="status">
        {status}
      </p>
      {tokens.length === 0 ? (
        <p className={settings.muted}>No tokens yet.</p>
      ) : (
        <ScrollBox label="Personal tokens" className={settings.tableWrap}>
          <table className={`${settings.table} stack-table`}>
            <caption className="visually-hidden">Personal tokens</caption>
            <thead>
              <tr>
                <th scope="col">Token</th>
                {showOwners && <th scope="col">Reviewer</th>}
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr
                  key={token.id}
                  data-testid="token-row"
                  className={token.revokedAt ? settings.muted : undefined}
                >
                  <td data-cell="name">
                    <code>{token.tokenPrefix}…</code>
                  </td>
                  {showOwners && (
                    <td data-label="Reviewer">
                      {token.user.name} <span className={styles.prefix}>{token.user.email}</span>
                    </td>
                  )}
                  <td data-label="Created">
                    <When at={token.createdAt} />
                  </td>
                  <td data-label="Last used">
                    <When at={token.lastUsedAt} />
                  </td>
                  <td data-label="Status">
                    {token.revokedAt ? (
                      <Badge tone="neutral">Revoked</Badge>
                    ) : (
                      <Badge tone="ok">Active</Badge>
                    )}
                  </td>
                  <td className={settings.actions} data-cell="actions">
                    {!token.revokedAt && (
                      <span className={settings.rowButtons}>
                        <RowConfirm
                          row={token.id}
                          verb="Revoke"
                          ariaLabel={`Revoke ${token.tokenPrefix}…`}
                          rows={rows}
                          onConfirm={async () => {
                            const result = await revokeReviewerTokenAction(token.id);
                            done(result, `Revoked ${token.tokenPrefix}…`);
                          }}
                        />
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <div className={settings.formActions}>
        <button
          type="button"
          className={settings.primary}
          disabled={pending}
          onClick={() =>
            startTransition(async () => {
              const result = await createReviewerTokenAction();
              if (result.ok) setSecret(result.token);
              done(result, result.ok ? `Created ${result.reviewerToken.tokenPrefix}…` : "");
            })
          }
        >
          Create a token
        </button>
      </div>
    </section>
  );
}

/**
 * "Sign out everywhere": every session of the reviewer ends, this one too (tokens if asked). Asked
 * twice, in place, since it signs this tab out as well; the sign-in page it lands on says what it
 * did (app/(auth)/sign-in/signed-out-note.ts).
 */
export function SignOutEverywhere() {
  const router = useRouter();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [revokeTokens, setRevokeTokens] = useState(false);
  const [asking, setAsking] = useState(false);
  const [pending, startTransition] = useTransition();
  return (
    <section className={settings.panel} aria-labelledby="sessions-title" id="sessions">
      <h2 id="sessions-title" className={settings.panelTitle}>
        Sessions
      </h2>
      <p className={styles.details}>
        Signed in somewhere you should not be? End every session of yours, on every device and
        browser, this one included. Open pages and streams stop within seconds.
      </p>
      <FormError failure={failure} />
      {/* A 24 px box with room below it: not a 16 px target right above the button (WCAG 2.5.8). */}
      <label className={`${settings.check} ${styles.largeCheck}`}>
        <input
          type="checkbox"
          checked={revokeTokens}
          onChange={(event) => setRevokeTokens(event.target.checked)}
        />
        Also revoke all my personal tokens
      </label>
      {asking && (
        <p className={styles.confirmNote} role="status" data-testid="sign-out-everywhere-question">
          Sign out everywhere now? Every session of yours ends, this one included
          {revokeTokens ? ", and every personal token of yours stops working" : ""}.
        </p>
      )}
      <div className={settings.formActions}>
        <ConfirmAction
          verb="Sign out everywhere"
          asking={asking}
          pending={pending}
          ariaLabel="Sign out everywhere"
          onAsk={() => setAsking(true)}
          onKeep={() => setAsking(false)}
          onConfirm={() =>
            startTransition(async () => {
              const result = await signOutEverywhereAction({ revokeTokens });
              if (!result.ok) {
                setAsking(false);
                return setFailure(result);
              }
              const said = new URLSearchParams({
                "signed-out": "everywhere",
                sessions: String(result.sessionsEnded),
                tokens: String(result.tokensRevoked),
              });
              router.replace(`/sign-in?${said.toString()}`);
              router.refresh();
            })
          }
        />
      </div>
    </section>
  );
}
