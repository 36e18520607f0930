// The embeddable review card: `@countersign/review-card`. The card is presentational: the host
// decides how decisions reach the API and passes the latest batch back in; `useBatch` keeps that
// batch current from the API's event stream for hosts that do not follow it themselves.

export { ReviewCard, type ReviewCardProps } from "./review-card";
export { useBatch, type UseBatchOptions, type UseBatchResult } from "./use-batch";
export {
  BatchRefusedError,
  followBatch,
  type FollowBatchOptions,
  type LiveBatch,
  type LiveStatus,
} from "./follow-batch";
export type { HeadingLevel } from "./card-header";
export { decisionText, describeDecision, policyCause, timeoutRuleText } from "./decision-text";
export {
  formatAgo,
  formatCost,
  formatCosts,
  formatDateTime,
  formatShortDateTime,
  type TimeFormat,
} from "./format";
export type {
  ApprovalIntent,
  Batch,
  BatchDecisionRequest,
  BatchKind,
  BatchOutcome,
  BatchStatus,
  Call,
  CallStatus,
  Decision,
  DecisionRequest,
  DecisionResult,
  DecisionSource,
  Plan,
  PolicyDecision,
  Ref,
  RememberScope,
  ReviewCardHandle,
  ReviewClaim,
  SetAsideMark,
  TimeoutAction,
  Viewer,
  Vote,
} from "./types";
