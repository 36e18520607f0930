// The API's resources and request bodies. They are generated into contract.gen.ts from the
// server's own schemas (`npm run generate:clients`); this file names the parts the SDK's users
// reach for. The SDK imports nothing from the server, so it runs anywhere.

import type { ClaimGrant } from "./contract.gen.js";

export type {
  AgentMode,
  Batch,
  BatchInput,
  BatchKind,
  BatchOutcome,
  BatchStatus,
  Call,
  CallInput,
  CallStatus,
  ClaimGrant,
  CreateRunInput,
  Decision,
  DecisionSource,
  ErrorResponse,
  Lease,
  Plan,
  PolicyEffect,
  Ref,
  RememberScope,
  Run,
  RunEvent,
  RunStatus,
  TimeoutAction,
  Vote,
} from "./contract.gen.js";

/** A reported action that carries `revert` data, handed to the claimer after a rollback request. */
export type RollbackAction = NonNullable<ClaimGrant["rollback"]>[number];
