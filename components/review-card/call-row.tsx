"use client";

import { useImperativeHandle, useLayoutEffect, useRef, useState, type Ref } from "react";
import { flushSync } from "react-dom";
import { ArgsEditor } from "./args-editor";
import { editorOf, reviewerName, summarizeVotes } from "./decision-text";
import { shownCost } from "./cost";
import { DiffView } from "./diff-view";
import { formatCost, isRecord } from "./format";
import { JsonView } from "./json-view";
import { ConflictNotice, DecisionNotice } from "./notices";
import { EditedSummary, SummaryEditor, summaryLimit, summaryOf } from "./plan-summary";
import { ReasonForm } from "./reason-form";
import { revealInvisible } from "./reveal";
import styles from "./review-card.module.css";
import { ScopeSelect } from "./scope-select";
import { UnsentDraft } from "./unsent-draft";
import { useTimeFormat } from "./time-context";
import { CallStatusBadge } from "./status-badge";
import type { Call, DecisionRequest, RememberScope } from "./types";
import type { Notice, Settled } from "./use-decisions";
import { breakable } from "./breakable";

type ApproveRequest = Extract<DecisionRequest, { outcome: "approve" }>;

export type CallRowHandle = {
  readonly actionable: boolean;
  approve(): void;
  approval(): { callId: string; label: string; request: ApproveRequest } | null;
  reject(): void;
  edit(): void;
  contains(node: Node | null): boolean;
};

// A form remembers the revision it was opened on: a decision typed against revision 2 must not
// be applied to a revision 3 the reviewer never saw (the server answers stale_revision).
type Mode = { kind: "idle" } | { kind: "rejecting" | "editing"; revision: number };

export type CallRowProps = {
  call: Call;
  /** the tool name, numbered when a batch repeats it: names buttons ("Approve refund_order #2") */
  label: string;
  /** the synthetic call of a plan batch: the plan section shows its args */
  isPlanCall: boolean;
  /** false when the card's heading already is this call's summary */
  showSummary: boolean;
  showStatus: boolean;
  /** pending, before the deadline, the host can decide, and the viewer has not voted yet */
  actionable: boolean;
  busy?: DecisionRequest["outcome"];
  notice?: Notice;
  /** the reviewer has read a race notice */
  onDismissNotice?: () => void;
  decide?: (request: DecisionRequest) => Promise<Settled>;
  viewerId?: string;
  now: () => number;
  compact: boolean;
  as: "li" | "div";
  ref?: Ref<CallRowHandle>;
};

export function CallRow({
  call,
  label,
  isPlanCall,
  showSummary,
  showStatus,
  actionable,
  busy,
  notice,
  onDismissNotice,
  decide,
  viewerId,
  now,
  compact,
  as: Tag,
  ref,
}: CallRowProps) {
  const { locale } = useTimeFormat();
  const [mode, setMode] = useState<Mode>({ kind: "idle" });
  const [scope, setScope] = useState<RememberScope>("once");
  const [reason, setReason] = useState("");
  // The args (or plan summary) editor's text as typed (null: untouched), kept here so a decision
  // made elsewhere while it is open does not take the reviewer's work with the editor.
  const [argsDraft, setArgsDraft] = useState<string | null>(null);
  const draftRef = useRef<HTMLDivElement>(null);
  const rowRef = useRef<HTMLLIElement & HTMLDivElement>(null);
  const noticeRef = useRef<HTMLDivElement>(null);
  const rejectRef = useRef<HTMLButtonElement>(null);
  const editRef = useRef<HTMLButtonElement>(null);
  // When the buttons a reviewer used disappear, focus moves here instead of to <body>.
  const focusAfterCommit = useRef<"row" | "notice" | null>(null);

  // A form still open on a call that can no longer be decided here (decided elsewhere, closed,
  // locked): its text is shown unsent instead of vanishing with the form.
  // (Not while our own decision is in flight or just landed: that form closes by itself.)
  const decidedByViewer = call.decision?.source === "reviewer" && call.decision.by?.id === viewerId;
  const orphaned = mode.kind !== "idle" && !actionable && !busy && !decidedByViewer;
  useLayoutEffect(() => {
    if (!orphaned) return;
    const active = document.activeElement;
    if (!active || active === document.body) draftRef.current?.focus();
  }, [orphaned]);

  useLayoutEffect(() => {
    const target = focusAfterCommit.current;
    if (!target) return;
    focusAfterCommit.current = null;
    (target === "notice" ? (noticeRef.current ?? rowRef.current) : rowRef.current)?.focus();
  });

  async function send(request: DecisionRequest) {
    if (!decide || busy) return;
    const settled = await decide(request);
    const active = document.activeElement;
    const focusWasHere = !active || active === document.body || !!rowRef.current?.contains(active);
    if (settled === "error") return; // keep the form and what was typed
    setMode({ kind: "idle" });
    if (settled === "ok") setReason("");
    if (focusWasHere) focusAfterCommit.current = settled === "ok" ? "row" : "notice";
  }

  const approveRequest = (): ApproveRequest => ({
    callId: call.id,
    outcome: "approve",
    expectedRevision: call.revision,
    scope,
  });
  const approve = () => send(approveRequest());
  // A plan's edit is of its summary only (the server holds the rest of the plan as proposed).
  const planSummary = isPlanCall ? summaryOf(call.args) : null;
  const open = (kind: "rejecting" | "editing") => {
    if (mode.kind === kind) {
      const field =
        kind === "rejecting"
          ? "reject-reason"
          : planSummary !== null
            ? "summary-editor"
            : "args-editor";
      rowRef.current?.querySelector<HTMLElement>(`[data-testid="${field}"]`)?.focus();
    } else {
      if (kind === "editing") setArgsDraft(null);
      setMode({ kind, revision: call.revision });
    }
  };
  const close = () => {
    const button = mode.kind === "editing" ? editRef : rejectRef;
    flushSync(() => setMode({ kind: "idle" }));
    button.current?.focus();
  };

  useImperativeHandle(ref, () => ({
    actionable: actionable && !busy,
    approve: () => {
      if (actionable && !busy) void approve();
    },
    approval: () =>
      actionable && !busy ? { callId: call.id, label, request: approveRequest() } : null,
    reject: () => {
      if (actionable && !busy) open("rejecting");
    },
    edit: () => {
      if (actionable && !busy) open("editing");
    },
    contains: (node) => !!node && !!rowRef.current?.contains(node),
  }));

  const pendingEdit =
    call.status === "pending" && isRecord(call.pendingEdit) ? call.pendingEdit : null;
  const cost = shownCost(call);
  const conflict = notice?.kind === "conflict" ? notice : undefined;
  const error = notice?.kind === "error" ? notice : undefined;
  const formRevision = mode.kind === "idle" ? null : mode.revision;
  const scopeSelect = (
    <ScopeSelect label={label} value={scope} onChange={setScope} disabled={!!busy} />
  );

  return (
    <Tag
      ref={rowRef}
      tabIndex={-1}
      className={styles.call}
      data-testid="call-row"
      data-call-id={call.id}
      data-status={call.status}
      aria-busy={busy ? true : undefined}
    >
      <div className={styles.callHead}>
        {/* a plan's synthetic call: the card's Plan label already says what it is */}
        {!isPlanCall && (
          <code className={styles.toolName} data-testid="tool-name">
            {breakable(call.toolName)}
          </code>
        )}
        {cost && (
          <span
            className={styles.cost}
            title={`Estimated cost (${cost.currency})`}
            data-testid="call-cost"
          >
            est. {formatCost(cost.amount, cost.currency, locale)}
            {cost.before !== undefined && (
              <span className={styles.muted}>
                {" "}
                (edited; the agent estimated {formatCost(cost.before, cost.currency, locale)})
              </span>
            )}
            {cost.beforeEdit && (
              <span className={styles.muted}> (the agent&apos;s, before the edit)</span>
            )}
          </span>
        )}
        {call.revision > 1 && (
          // Said with what it means (issue 26): each edit makes a new revision, and an approval
          // counts for the revision it saw.
          <span
            className={styles.muted}
            title="Each edit makes a new revision; an approval counts only for the revision it saw."
          >
            edited {call.revision === 2 ? "once" : `${call.revision - 1} times`} (revision{" "}
            {call.revision})
          </span>
        )}
        {showStatus && <CallStatusBadge status={call.status} />}
      </div>
      {call.summary && showSummary && !isPlanCall && (
        <p className={styles.summary}>{revealInvisible(call.summary)}</p>
      )}
      {call.risks.length > 0 && !isPlanCall && <Risks risks={call.risks} label={label} />}
      {!isPlanCall && (
        <details className={styles.section} open={!compact}>
          <summary className={styles.sectionSummary}>
            Arguments{" "}
            <span className={styles.muted}>({Object.keys(call.args).length} top-level)</span>
          </summary>
          <JsonView value={call.args} openDepth={compact ? 1 : 8} />
        </details>
      )}
      {pendingEdit && planSummary !== null && (
        <div className={`${styles.notice} ${styles.toneWarning}`}>
          <EditedSummary
            lead={`Summary edited by ${reviewerName(editorOf(call), viewerId)} (revision ${call.revision}): approving now approves the plan with this summary.`}
            summary={summaryOf(pendingEdit) ?? ""}
            proposed={planSummary}
          />
        </div>
      )}
      {pendingEdit && planSummary === null && (
        <div className={`${styles.notice} ${styles.toneWarning}`}>
          <p className={styles.noticeHeadline}>
            Edited by a reviewer (revision {call.revision}): approving now approves these args.
          </p>
          <DiffView before={call.args} after={pendingEdit} label={`Pending edit of ${label}`} />
        </div>
      )}
      {call.metadata && Object.keys(call.metadata).length > 0 && !compact && (
        <details className={styles.section}>
          <summary className={styles.sectionSummary}>Metadata</summary>
          <JsonView value={call.metadata} openDepth={2} />
        </details>
      )}
      {call.requiredApprovals > 1 && <Votes call={call} viewerId={viewerId} />}
      {conflict && (
        <ConflictNotice
          ref={noticeRef}
          notice={conflict}
          call={call}
          isPlanCall={planSummary !== null}
          onDismiss={onDismissNotice}
          now={now}
          viewerId={viewerId}
        />
      )}
      <DecisionNotice
        call={call}
        label={label}
        isPlanCall={planSummary !== null}
        now={now}
        viewerId={viewerId}
        headlineShown={!!conflict}
      />
      {!call.decision && call.status === "cancelled" && (
        <p className={styles.muted}>Cancelled before anyone decided.</p>
      )}

      {actionable && mode.kind === "idle" && (
        <div
          className={styles.controls}
          role="group"
          aria-label={planSummary !== null ? "Decide the plan" : `Decide ${label}`}
        >
          <button
            type="button"
            className={`${styles.button} ${styles.buttonApprove}`}
            data-testid="approve-button"
            disabled={!!busy}
            aria-label={busy === "approve" ? `Approving ${label}…` : `Approve ${label}`}
            onClick={() => void approve()}
          >
            {busy === "approve" ? "Approving…" : planSummary !== null ? "Approve plan" : "Approve"}
          </button>
          {scopeSelect}
          <span className={styles.spacer} />
          <button
            ref={rejectRef}
            type="button"
            className={`${styles.button} ${styles.buttonDanger}`}
            data-testid="reject-button"
            disabled={!!busy}
            aria-label={`Reject ${label}`}
            onClick={() => open("rejecting")}
          >
            {planSummary !== null ? "Reject plan" : "Reject"}
          </button>
          <button
            ref={editRef}
            type="button"
            className={styles.button}
            data-testid="edit-button"
            disabled={!!busy}
            aria-label={planSummary !== null ? "Edit plan summary" : `Edit ${label}`}
            onClick={() => open("editing")}
          >
            {planSummary !== null ? "Edit plan summary" : "Edit"}
          </button>
        </div>
      )}
      {actionable && formRevision !== null && formRevision !== call.revision && (
        <p className={styles.warningText}>
          This call changed while the form was open (now revision {call.revision}). Review the new
          version: sending now will be refused.
        </p>
      )}
      {actionable && mode.kind === "rejecting" && (
        <ReasonForm
          label={
            planSummary !== null ? "Reason for rejecting the plan" : `Reason for rejecting ${label}`
          }
          value={reason}
          onChange={setReason}
          onSubmit={(text) =>
            void send({
              callId: call.id,
              outcome: "reject",
              expectedRevision: mode.revision,
              reason: text,
            })
          }
          onCancel={close}
          busy={busy === "reject"}
          submitLabel={planSummary !== null ? "Reject plan" : "Reject"}
          busyLabel="Rejecting…"
          submitAriaLabel={`Reject ${label}`}
          testIds={{ reason: "reject-reason", confirm: "confirm-reject" }}
        />
      )}
      {actionable && mode.kind === "editing" && planSummary !== null && (
        <SummaryEditor
          original={planSummary}
          initial={summaryOf(pendingEdit) ?? planSummary}
          maxLength={summaryLimit(call.inputSchema)}
          busy={busy === "edit"}
          onSubmit={(summary) =>
            void send({
              callId: call.id,
              outcome: "edit",
              expectedRevision: mode.revision,
              editedArgs: { ...call.args, summary },
              scope,
            })
          }
          onCancel={close}
          scopeControl={scopeSelect}
          onTextChange={setArgsDraft}
        />
      )}
      {actionable && mode.kind === "editing" && planSummary === null && (
        <ArgsEditor
          label={label}
          original={call.args}
          initial={pendingEdit ?? call.args}
          inputSchema={call.inputSchema}
          busy={busy === "edit"}
          onSubmit={(editedArgs) =>
            void send({
              callId: call.id,
              outcome: "edit",
              expectedRevision: mode.revision,
              editedArgs,
              scope,
            })
          }
          onCancel={close}
          scopeControl={scopeSelect}
          onTextChange={setArgsDraft}
        />
      )}
      {orphaned && (
        <UnsentDraft
          ref={draftRef}
          call={call}
          draft={
            mode.kind === "rejecting"
              ? { kind: "reason", text: reason }
              : { kind: planSummary !== null ? "summary" : "edit", text: argsDraft ?? "" }
          }
          viewerId={viewerId}
          onDismiss={() => {
            setMode({ kind: "idle" });
            rowRef.current?.focus();
          }}
        />
      )}
      {error && (
        <p role="alert" className={styles.errorText} data-testid="decision-error">
          {error.message}
        </p>
      )}
    </Tag>
  );
}

export function Risks({ risks, label }: { risks: string[]; label: string }) {
  return (
    <ul className={styles.risks} aria-label={`Risks of ${label}`}>
      {risks.map((risk, index) => (
        <li key={index} className={styles.risk}>
          <span aria-hidden="true" className={styles.riskIcon}>
            ⚠
          </span>
          {revealInvisible(risk)}
        </li>
      ))}
    </ul>
  );
}

function Votes({ call, viewerId }: { call: Call; viewerId?: string }) {
  const votes = summarizeVotes(call, viewerId);
  const name = (vote: { reviewer: { id: string; name: string } }) =>
    vote.reviewer.id === viewerId ? `${vote.reviewer.name} (you)` : vote.reviewer.name;
  const missing = call.requiredApprovals - votes.approvers.length;
  return (
    <div className={styles.votes} data-testid="votes">
      <span className={styles.tally}>{votes.tally}</span>
      {votes.approvers.length > 0 && <span>: {votes.approvers.map(name).join(", ")}</span>}
      {votes.viewerVoted && call.status === "pending" && missing > 0 && (
        <span className={styles.muted}>
          {" "}
          — you voted; waiting for {missing} more approval{missing === 1 ? "" : "s"}
        </span>
      )}
      {votes.superseded.length > 0 && (
        <p className={styles.muted}>
          No longer counted after an edit: {votes.superseded.map(name).join(", ")}
        </p>
      )}
    </div>
  );
}
