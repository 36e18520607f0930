// The API's JSON shapes as the card receives them: generated from the server's contract into
// contract.gen.ts (`npm run generate:clients`; test/client-gen/generated-clients.test.ts fails when
// it is stale), inside this folder so the package ships alone. What follows is the card's own:
// the names of shapes the contract nests, and what the card and its host say to each other.

import type { Batch, Call, Decision, RememberScope } from "./contract.gen";

export type * from "./contract.gen";

/** when a policy decided (source `policy`): the rule, as it was then, or the agent's mode */
export type PolicyDecision = NonNullable<Decision["policy"]>;

/** a reviewer who set a pending batch aside ("Not now") and has not seen it back yet */
export type SetAsideMark = NonNullable<Batch["setAside"]>[number];

/** a reviewer's live "I'm reviewing this" claim */
export type ReviewClaim = NonNullable<Batch["claim"]>;

export type DecisionRequest =
  | { callId: string; outcome: "approve"; expectedRevision: number; scope: RememberScope }
  | { callId: string; outcome: "reject"; expectedRevision: number; reason: string }
  | {
      callId: string;
      outcome: "edit";
      expectedRevision: number;
      editedArgs: Record<string, unknown>;
      scope: RememberScope;
    };

export type BatchDecisionRequest = {
  batchId: string;
  outcome: "approve" | "reject";
  expectedRevisions: Record<string, number>;
  reason?: string;
};

/**
 * What the host tells the card about a decision it attempted. `code` is the API error code
 * (already_decided, stale_revision, not_pending, invalid_request, forbidden, …). `current` may be
 * the batch, or the call as `POST /calls/{id}/decision` returns it in a 409: the card merges it.
 */
export type DecisionResult =
  { ok: true; batch: Batch } | { ok: false; code: string; message: string; current?: Batch | Call };

export type ApprovalIntent = {
  batchId: string;
  callId: string;
  /** the tool name as the card's buttons name it ("refund_order #2") */
  label: string;
  request: Extract<DecisionRequest, { outcome: "approve" }>;
};

export type ReviewCardHandle = {
  /** approves the focused (else the first) pending call, with its chosen remember scope */
  approve(): void;
  /**
   * what `approve()` would send now (the call, the revision shown, its scope, its label), without
   * sending it, or null when nothing is open: a host that holds a keyed approval back for an
   * undo window sends this later through its own `onDecide`
   */
  nextApproval(): ApprovalIntent | null;
  /** opens the reason field of the focused (else the first) pending call and focuses it */
  reject(): void;
  /** opens the args editor of the focused (else the first) pending call */
  edit(): void;
  focus(): void;
};

export type Viewer = { id: string; name: string };
