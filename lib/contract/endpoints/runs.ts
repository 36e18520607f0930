import { CreateRunInput, createRun } from "@/lib/runs/create-run";
import { json } from "@/lib/http/api-route";
import { getRun } from "@/lib/runs/get-run";
import { ClaimRunInput, claimRun } from "@/lib/runs/claim-run";
import { HeartbeatInput, heartbeat } from "@/lib/runs/heartbeat";
import { RecordToolEventInput, recordToolEvent } from "@/lib/runs/record-tool-event";
import { RecordGatedCallInput, recordGatedCall } from "@/lib/gated-calls/record-gated-call";
import { hostedGatewayOf } from "@/lib/mcp-gateways/hosted-call-marker";
// aliased: a call named use… in a handler reads as a React hook to the linter
import { useGatedDecision as applyGatedDecision } from "@/lib/gated-calls/use-gated-decision";
import {
  ReportGatedOutcomesInput,
  reportGatedOutcomes,
} from "@/lib/gated-calls/report-gated-outcomes";
import { CompleteRunInput, completeRun } from "@/lib/runs/complete-run";
import { RequestRollbackInput, requestRollback } from "@/lib/runs/request-rollback";
import { defineEndpoint } from "../endpoint";

export const runEndpoints = [
  defineEndpoint({
    method: "POST",
    path: "/runs",
    auth: "agent",
    operationId: "createRun",
    tag: "Runs",
    summary: "Start a run (optionally paused at once with its first batch)",
    body: CreateRunInput,
    idempotent: true,
    ok: {
      status: 201,
      schema: "Run",
      description: "The run; 200 with the same run when an Idempotency-Key repeats",
    },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ request, body, actor }) => {
      const { run, replayed } = await createRun(actor, body, {
        idempotencyKey: request.headers.get("idempotency-key"),
      });
      return json(run, replayed ? 200 : 201);
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/runs/{runId}",
    auth: "either",
    operationId: "getRun",
    tag: "Runs",
    summary: "A run with its batches",
    ok: { status: 200, schema: "Run" },
    errors: [401, 404],
    handler: async ({ params, actor }) => json(await getRun(actor, params.runId)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/claim",
    auth: "agent",
    operationId: "claimRun",
    tag: "Runs",
    summary: "Claim a ready run (a lease with a token)",
    description:
      "Exactly one concurrent claimer wins; a lease that ran out can be taken over. `rollback` is null unless a rollback was requested.",
    body: ClaimRunInput,
    ok: { status: 200, schema: "Claim" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) => json(await claimRun(actor, params.runId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/heartbeat",
    auth: "agent",
    operationId: "heartbeatRun",
    tag: "Runs",
    summary: "Extend the lease",
    body: HeartbeatInput,
    ok: { status: 200, schema: "Lease" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) => json(await heartbeat(actor, params.runId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/events",
    auth: "agent",
    operationId: "recordToolEvent",
    tag: "Runs",
    summary: "Report a tool result (or a reverted action)",
    body: RecordToolEventInput,
    ok: { status: 201, schema: "Event" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) =>
      json(await recordToolEvent(actor, params.runId, body), 201),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/gated-calls",
    auth: "agent",
    operationId: "recordGatedCall",
    tag: "Runs",
    summary: "Record an MCP gateway's tool call and answer allow, deny or ask at once",
    description:
      "One request per governed call, for gateways (countersign-mcp-gateway): a batch of one call on the session's run, which must be running and stays so (calls never make it wait, so one waiting for a person holds up none of the others). Settled at once by policy, remembered approval or the agent's mode (allow / deny: 201, the decision used), or left for a person (ask: 201, wait on the batch). A call no rule settles first picks up the card of an earlier identical call (same tool and canonical arguments) of the same agent key and gateway whose decision nobody used: 200 with pickedUp, answered from that decision (used now, once) or, still waiting, ask on that card. A deny rule in force wins over an earlier approval.",
    body: RecordGatedCallInput,
    ok: { status: 201, schema: "GatedCall" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ request, params, body, actor }) => {
      const { answer, created } = await recordGatedCall(
        actor,
        params.runId,
        body,
        hostedGatewayOf(request),
      );
      return json(answer, created ? 201 : 200);
    },
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/gated-calls/{callId}/use",
    auth: "agent",
    operationId: "useGatedDecision",
    tag: "Runs",
    summary: "Use the decision a gateway waited for (once)",
    description:
      "409 not_ready while the call waits, already_claimed when its decision was used already (a replay, or another gateway picked it up), not_pending when it was withdrawn.",
    ok: { status: 200, schema: "GatedCall" },
    errors: [401, 403, 404, 409],
    handler: async ({ params, actor }) =>
      json(await applyGatedDecision(actor, params.runId, params.callId)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/gated-calls/outcomes",
    auth: "agent",
    operationId: "reportGatedOutcomes",
    tag: "Runs",
    summary: "Report what the tools of a gateway's approved calls answered",
    description:
      "tool.completed / tool.failed events on the run, once per call: a retried report of a call already reported changes nothing and is listed in alreadyReported.",
    body: ReportGatedOutcomesInput,
    ok: { status: 201, schema: "GatedOutcomes" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) =>
      json(await reportGatedOutcomes(actor, params.runId, body), 201),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/complete",
    auth: "agent",
    operationId: "completeRun",
    tag: "Runs",
    summary: "End the run",
    body: CompleteRunInput,
    ok: { status: 200, schema: "Run" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) => json(await completeRun(actor, params.runId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/rollback",
    auth: "either",
    operationId: "requestRollback",
    tag: "Runs",
    summary: "Ask for the run's reported actions to be reverted",
    description:
      "The next claim lists the reported actions that carry revert data, newest first; a finished run becomes ready so a worker can claim it. 409 run_terminal for a cancelled run, for a finished run whose every reported action was already reverted (nothing left to roll back), and, for a reviewer, where no worker could perform it (MCP run, revoked agent key, never claimed).",
    body: RequestRollbackInput,
    ok: { status: 202, schema: "Run" },
    errors: [400, 401, 404, 409],
    handler: async ({ params, body, actor }) =>
      json(await requestRollback(actor, params.runId, body), 202),
  }),
];
