import { editorOf, policyCause } from "./decision-text";
import { formatAgo, isRecord, parseTime, plural } from "./format";
import type { Batch, BatchDecisionRequest, Call, Decision, DecisionRequest } from "./types";

// The sentence a reviewer reads when someone else moved first: one sentence that says what was
// decided, by whom and when, and what became of the reviewer's own action (issue 26, items 1–2).
// "Your edit (amount 30) was not applied: Dana approved the original (amount 42) 3 s ago."
// Pure, so every pair of actions is unit-tested (test/components/race-text.test.ts).

/** What the reviewer tried on one call. */
export type Attempt =
  | { kind: "approve" }
  | { kind: "reject"; reason: string }
  | { kind: "edit"; editedArgs: Record<string, unknown> }
  | { kind: "summary"; summary: string };

/** What the reviewer tried on the whole batch ("Approve all", "Reject all"). */
export type BatchAttempt = {
  kind: "approve-all" | "reject-all";
  /** how many calls the reviewer's click covered */
  count: number;
  reason?: string;
};

export function attemptOf(request: DecisionRequest, isPlanCall: boolean): Attempt {
  switch (request.outcome) {
    case "approve":
      return { kind: "approve" };
    case "reject":
      return { kind: "reject", reason: request.reason };
    case "edit": {
      const summary = request.editedArgs.summary;
      return isPlanCall && typeof summary === "string"
        ? { kind: "summary", summary }
        : { kind: "edit", editedArgs: request.editedArgs };
    }
  }
}

export function batchAttemptOf(request: BatchDecisionRequest): BatchAttempt {
  return {
    kind: request.outcome === "approve" ? "approve-all" : "reject-all",
    count: Object.keys(request.expectedRevisions).length,
    ...(request.reason === undefined ? {} : { reason: request.reason }),
  };
}

const MAX_SHOWN = 3;
const MAX_VALUE = 32;

function shortValue(value: unknown): string {
  const text = value === undefined ? "undefined" : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function changedKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(after), ...Object.keys(before)])];
  return keys.filter((key) => !same(before[key], after[key]));
}

function listed(parts: string[], total: number): string {
  const more = total - parts.length;
  return more > 0 ? `${parts.join(", ")} and ${plural(more, "more change")}` : parts.join(", ");
}

/** What an edit changed, as values after it: "amount 30", "note \"rush\", without coupon". */
export function changesText(before: Record<string, unknown>, after: Record<string, unknown>) {
  const keys = changedKeys(before, after);
  const parts = keys
    .slice(0, MAX_SHOWN)
    .map((key) => (key in after ? `${key} ${shortValue(after[key])}` : `without ${key}`));
  return listed(parts, keys.length);
}

/** The same keys as `changesText(before, after)`, as they were before: "amount 42". */
export function originalText(before: Record<string, unknown>, after: Record<string, unknown>) {
  const keys = changedKeys(before, after);
  const parts = keys
    .slice(0, MAX_SHOWN)
    .map((key) => (key in before ? `${key} ${shortValue(before[key])}` : `no ${key}`));
  return listed(parts, keys.length);
}

const inParens = (text: string) => (text ? ` (${text})` : "");

function withoutFinalStop(text: string): string {
  return text.trim().replace(/[.\s]+$/, "");
}

function agoOf(at: string | null | undefined, nowMs: number): string {
  const ms = parseTime(at);
  return ms === null ? "earlier" : formatAgo(ms, nowMs);
}

function subjectOf(attempt: Attempt, args: Record<string, unknown>): string {
  switch (attempt.kind) {
    case "approve":
      return "Your approval was not recorded";
    case "reject":
      return "Your rejection was not recorded";
    case "edit":
      return `Your edit${inParens(changesText(args, attempt.editedArgs))} was not applied`;
    case "summary":
      return "Your summary was not applied";
  }
}

/** "Dana", or "you" when the viewer did it (another tab, a held keyboard approval). */
function whoOf(decision: Decision, viewerId?: string): { name: string; self: boolean } {
  if (!decision.by) return { name: "a reviewer", self: false };
  const self = decision.by.id === viewerId;
  return { name: self ? "you" : decision.by.name, self };
}

/**
 * How a call was settled, as the second half of the race sentence: "Dana approved the original
 * (amount 42) 3 s ago". `object` names the call ("it", "the plan", "refund_order").
 */
function settledClause(
  call: Call,
  decision: Decision,
  attempt: Attempt | null,
  object: string,
  nowMs: number,
  viewerId?: string,
): string {
  const ago = agoOf(decision.at, nowMs);
  const approved = decision.outcome === "approved";
  const was =
    object === "both" || object === "all of them" || / and /.test(object) ? "were" : "was";
  switch (decision.source) {
    case "timeout":
      return `${object} ${was} ${decision.outcome} automatically at the deadline ${ago}`;
    case "memory":
      return `${object} ${was} approved automatically ${ago}, by an approval remembered from earlier`;
    case "policy": {
      const cause = policyCause(decision.policy);
      return cause?.kind === "rule"
        ? `${object} ${was} ${approved ? "allowed" : "blocked"} by policy '${cause.name}' ${ago}`
        : `${object} ${was} ${decision.outcome} by policy ${ago}`;
    }
    case "reviewer":
      break;
  }
  const { name, self } = whoOf(decision, viewerId);
  const did = (verb: string) => (self ? `you had already ${verb}` : `${name} ${verb}`);
  if (!approved) return `${did(`rejected ${object}`)} ${ago}`;
  const edited = isRecord(decision.editedArgs) ? decision.editedArgs : null;
  const isPlan = object === "the plan";
  if (!edited) {
    if (attempt?.kind === "edit")
      return `${did("approved the original")}${inParens(originalText(call.args, attempt.editedArgs))} ${ago}`;
    if (attempt?.kind === "summary") return `${did("approved the plan as proposed")} ${ago}`;
    return `${did(`approved ${object}`)} ${ago}`;
  }
  if (attempt?.kind === "edit" && same(edited, attempt.editedArgs))
    return `${did("approved the same edit")} ${ago}`;
  if (isPlan || attempt?.kind === "summary")
    return `${did(`approved ${object} with ${attempt?.kind === "summary" ? "a different" : "an edited"} summary`)} ${ago}`;
  const what =
    attempt?.kind === "edit"
      ? "a different edit"
      : object === "it"
        ? "an edited version"
        : `an edited version of ${object}`;
  return `${did(`approved ${what}`)}${inParens(changesText(call.args, edited))} ${ago}`;
}

/** A pending call that moved on to a newer revision: who edited it, when, and what changed. */
function editedClause(call: Call, object: string, nowMs: number, viewerId?: string): string {
  const editor = editorOf(call);
  const vote = call.votes.find(
    (v) => v.revision === call.revision && v.outcome === "approved" && v.reviewer.id === editor?.id,
  );
  const changes = isRecord(call.pendingEdit)
    ? inParens(changesText(call.args, call.pendingEdit))
    : "";
  const when = vote ? ` ${formatAgo(parseTime(vote.at) ?? nowMs, nowMs)}` : "";
  const did = !editor
    ? `${object} was edited`
    : `${editor.id === viewerId ? "you" : editor.name} edited ${object}`;
  return `${did}${changes}${when}; review the edit before deciding`;
}

/**
 * The race sentence for one call: what the viewer tried (`attempt`), the call as it is now, and
 * the conflict code and message the server answered with (used only when the call's state does
 * not say more).
 */
export function raceText(options: {
  attempt: Attempt;
  call: Call;
  code: string;
  serverMessage: string;
  nowMs: number;
  viewerId?: string;
  isPlanCall?: boolean;
  /** the revision the viewer acted on */
  expectedRevision?: number;
}): string {
  const { attempt, call, code, nowMs, viewerId } = options;
  const object = options.isPlanCall ? "the plan" : "it";
  const subject = subjectOf(attempt, call.args);
  const clause = (() => {
    if (call.decision) return settledClause(call, call.decision, attempt, object, nowMs, viewerId);
    if (call.status === "cancelled") return "the agent cancelled this request";
    if (call.status === "expired") return `${object} expired at its deadline`;
    const moved =
      code === "stale_revision" ||
      (options.expectedRevision !== undefined && call.revision !== options.expectedRevision);
    if (moved && call.status === "pending") return editedClause(call, object, nowMs, viewerId);
    if (code === "already_decided" && call.status === "pending")
      return "you already voted on this version; it needs approvals from other reviewers";
    return withoutFinalStop(options.serverMessage);
  })();
  return `${subject}: ${clause}.`;
}

const PLAN_SUBJECT = { "approve-all": "approval", "reject-all": "rejection" } as const;

function batchSubject(attempt: BatchAttempt, isPlan: boolean): string {
  const what = PLAN_SUBJECT[attempt.kind];
  if (isPlan) return `Your ${what} of the plan was not recorded`;
  const calls = attempt.count === 2 ? "both calls" : `all ${attempt.count} calls`;
  return `Your ${what} of ${calls} was not recorded`;
}

function joinAnd(parts: string[]): string {
  if (parts.length <= 1) return parts.join("");
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

/** The calls settled since the viewer loaded the batch, grouped by who settled them and how. */
function settledGroups(batch: Batch, labels: string[], nowMs: number, viewerId?: string) {
  const groups = new Map<string, { calls: Call[]; labels: string[]; decision: Decision }>();
  batch.calls.forEach((call, index) => {
    const decision = call.decision;
    if (!decision) return;
    const key = [
      decision.source,
      decision.by?.id ?? "",
      decision.outcome,
      isRecord(decision.editedArgs) ? "edited" : "",
    ].join("|");
    const group = groups.get(key) ?? { calls: [], labels: [], decision };
    group.calls.push(call);
    group.labels.push(labels[index] ?? call.toolName);
    // the latest decision of the group says "how long ago"
    if ((parseTime(decision.at) ?? 0) > (parseTime(group.decision.at) ?? 0))
      group.decision = decision;
    groups.set(key, group);
  });
  return [...groups.values()].map((group) => {
    const everyCall = group.calls.length === batch.calls.length && batch.calls.length > 1;
    const object = everyCall
      ? batch.calls.length === 2
        ? "both"
        : "all of them"
      : joinAnd(group.labels);
    return {
      ...group,
      text: settledClause(group.calls[0]!, group.decision, null, object, nowMs, viewerId),
    };
  });
}

/**
 * The race sentence for "Approve all" / "Reject all": a batch decision is all or nothing, so it
 * names what was settled first (by whom, when) and how many calls are still open.
 */
export function batchRaceText(options: {
  attempt: BatchAttempt;
  batch: Batch;
  code: string;
  serverMessage: string;
  nowMs: number;
  viewerId?: string;
  /** each call's name on the card ("refund_order #2", "step 1: create_db_role") */
  labels: string[];
  /** the revision of each call the viewer acted on */
  expectedRevisions?: Record<string, number>;
}): string {
  const { attempt, batch, labels, nowMs, viewerId } = options;
  const isPlan = batch.kind === "plan";
  const subject = batchSubject(attempt, isPlan);
  const open = batch.calls.filter((call) => call.status === "pending");
  const stillOpen =
    open.length === 0
      ? ""
      : `, so nothing else was decided and ${open.length === 1 ? "1 call is" : `${open.length} calls are`} still open`;
  if (batch.status === "cancelled") return `${subject}: the agent cancelled this request.`;
  if (batch.status === "expired") return `${subject}: the request expired at its deadline.`;
  const groups = settledGroups(batch, labels, nowMs, viewerId);
  if (groups.length > 0) return `${subject}: ${joinAnd(groups.map((g) => g.text))}${stillOpen}.`;
  const moved = open.filter(
    (call) =>
      options.expectedRevisions?.[call.id] !== undefined &&
      options.expectedRevisions[call.id] !== call.revision,
  );
  if (moved.length > 0 || options.code === "stale_revision") {
    const call = moved[0] ?? open[0];
    if (call) {
      const label = labels[batch.calls.indexOf(call)] ?? call.toolName;
      return `${subject}: ${editedClause(call, label, nowMs, viewerId).replace("; review", ", so nothing was decided; review")}.`;
    }
  }
  return `${subject}: ${withoutFinalStop(options.serverMessage.replace(/^Nothing was decided:\s*/, ""))}.`;
}

/**
 * The open calls a reviewer may still decide after losing a batch decision to themselves (a held
 * keyboard approval, another tab): every settled call was settled by the viewer. Empty otherwise.
 */
export function restToDecide(batch: Batch, viewerId?: string): Call[] {
  if (!viewerId || batch.status !== "pending") return [];
  const settled = batch.calls.filter((call) => call.status !== "pending");
  // an open call the viewer already voted on (a quorum) waits for others, not for them
  const open = batch.calls.filter(
    (call) =>
      call.status === "pending" &&
      !call.votes.some((v) => v.revision === call.revision && v.reviewer.id === viewerId),
  );
  if (settled.length === 0) return [];
  const bySelf = settled.every(
    (call) => call.decision?.source === "reviewer" && call.decision.by?.id === viewerId,
  );
  return bySelf ? open : [];
}
