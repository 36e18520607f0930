// A small typed fetch wrapper over the public API (/api/v1), private to the demo agent: only the
// calls and fields the demo uses. The real client for agents will live in lib/sdk/.

export type Ref = { id: string; name: string };

export type Decision = {
  outcome: "approved" | "rejected";
  source: "reviewer" | "policy" | "memory" | "timeout";
  by: Ref | null;
  at: string;
  reason: string | null;
  /** when a reviewer edited the call: the args to run instead of `args` */
  editedArgs: Record<string, unknown> | null;
};

export type Call = {
  id: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  status: "pending" | "approved" | "rejected" | "expired" | "cancelled";
  revision: number;
  decision: Decision | null;
};

export type Batch = {
  id: string;
  runId: string;
  kind: "action" | "plan";
  status: "pending" | "decided" | "expired" | "cancelled";
  outcome: "approved" | "rejected" | "mixed" | null;
  queue: Ref;
  calls: Call[];
  expiresAt: string;
  onTimeout: "reject" | "approve" | "escalate";
  reviewUrl: string;
};

export type RunStatus =
  "running" | "waiting_approval" | "ready" | "resuming" | "completed" | "failed" | "cancelled";

export type Run = { id: string; status: RunStatus; batches?: Batch[] };

export type Claim = {
  claimToken: string;
  leaseExpiresAt: string;
  run: Run;
  checkpoint: unknown;
  batch: Batch | null;
};

/** The API answered with an error (`{ error: { code, message } }`, or something unexpected). */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = "ApiProblem";
  }
}

/** Nothing answered at the base URL (connection refused, DNS, reset…). */
export class ServerUnreachable extends Error {
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    super(`Countersign is not answering at ${baseUrl}`, { cause });
    this.name = "ServerUnreachable";
  }
}

type RequestOptions = {
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
};

export class DemoApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly agentKey: string,
  ) {}

  private async request<T>(method: "GET" | "POST", path: string, options: RequestOptions = {}) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.agentKey}` };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new ServerUnreachable(this.baseUrl, error);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: reported below with the status
    }
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
      throw new ApiProblem(
        response.status,
        error?.code ?? "unexpected_response",
        error?.message ?? `${method} ${path} answered ${response.status} ${text.slice(0, 200)}`,
        parsed,
      );
    }
    return parsed as T;
  }

  /** POST /runs with the run's first batch; safe to repeat with the same idempotency key. */
  createRun(body: Record<string, unknown>, idempotencyKey: string): Promise<Run> {
    return this.request<Run>("POST", "/runs", { body, idempotencyKey });
  }

  /** POST /runs/{runId}/batches: pause the run again (a claim holder passes its claimToken). */
  createBatch(
    runId: string,
    body: Record<string, unknown>,
    idempotencyKey: string,
  ): Promise<Batch> {
    return this.request<Batch>("POST", `/runs/${encodeURIComponent(runId)}/batches`, {
      body,
      idempotencyKey,
    });
  }

  getRun(runId: string): Promise<Run> {
    return this.request<Run>("GET", `/runs/${encodeURIComponent(runId)}`);
  }

  /** Long-poll: answers once the batch leaves `pending`, or after `waitSecs` (still pending). */
  waitForBatch(batchId: string, waitSecs: number, signal?: AbortSignal): Promise<Batch> {
    return this.request<Batch>("GET", `/batches/${encodeURIComponent(batchId)}?wait=${waitSecs}`, {
      signal,
    });
  }

  cancelBatch(batchId: string, reason: string): Promise<Batch> {
    return this.request<Batch>("POST", `/batches/${encodeURIComponent(batchId)}/cancel`, {
      body: { reason },
    });
  }

  claimRun(runId: string, workerId: string, leaseSecs: number): Promise<Claim> {
    return this.request<Claim>("POST", `/runs/${encodeURIComponent(runId)}/claim`, {
      body: { workerId, leaseSecs },
    });
  }

  reportToolEvent(
    runId: string,
    event: {
      claimToken: string;
      type: "tool.completed" | "tool.failed";
      toolCallId: string;
      result?: unknown;
      error?: unknown;
      revert?: unknown;
    },
  ): Promise<unknown> {
    return this.request("POST", `/runs/${encodeURIComponent(runId)}/events`, { body: event });
  }

  completeRun(
    runId: string,
    body: {
      claimToken?: string;
      outcome: "completed" | "failed";
      result?: unknown;
      error?: unknown;
    },
  ): Promise<Run> {
    return this.request<Run>("POST", `/runs/${encodeURIComponent(runId)}/complete`, { body });
  }
}

/** Resolves when GET /api/health answers 200; throws ServerUnreachable or ApiProblem otherwise. */
export async function checkHealth(baseUrl: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new ServerUnreachable(baseUrl, error);
  }
  if (response.ok) return;
  const text = await response.text().catch(() => "");
  throw new ApiProblem(
    response.status,
    "unhealthy",
    `GET ${baseUrl}/api/health answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`,
    text,
  );
}
