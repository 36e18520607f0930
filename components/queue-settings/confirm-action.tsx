"use client";

import settings from "./queue-settings.module.css";

/**
 * A destructive action asked twice, in place: "Revoke…" turns into "Revoke now" and "Keep". The
 * caller keeps which row is asking, so a table has at most one question open at a time.
 */
export function ConfirmAction({
  verb,
  asking,
  pending,
  ariaLabel,
  onAsk,
  onKeep,
  onConfirm,
}: {
  /** what the action does, as its button says it: "Revoke", "Deactivate" */
  verb: string;
  asking: boolean;
  pending: boolean;
  /** names what the first button acts on, for screen readers: "Revoke the key of Billing bot" */
  ariaLabel: string;
  onAsk: () => void;
  onKeep: () => void;
  onConfirm: () => void;
}) {
  if (!asking) {
    return (
      <button
        type="button"
        className={settings.danger}
        disabled={pending}
        onClick={onAsk}
        aria-label={ariaLabel}
      >
        {verb}…
      </button>
    );
  }
  return (
    <>
      <button type="button" className={settings.danger} disabled={pending} onClick={onConfirm}>
        {verb} now
      </button>
      <button type="button" className={settings.secondary} onClick={onKeep}>
        Keep
      </button>
    </>
  );
}
