// The embeddable review card: `countersign/review-card`. Presentational only; the host decides
// how decisions reach the API and passes the latest batch back in.

export { ReviewCard, type ReviewCardProps } from "./review-card";
export type { HeadingLevel } from "./card-header";
export { decisionText, describeDecision, policyCause, timeoutRuleText } from "./decision-text";
export { formatAgo, formatCost } from "./format";
export type {
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
  TimeoutAction,
  Viewer,
  Vote,
} from "./types";
