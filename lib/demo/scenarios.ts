import { randomBytes } from "node:crypto";

// What the demo's agents ask for, and their fake tools: each tool prints what it would do and
// returns a result (and, where the action can be undone, the data a rollback would need).

export const SCENARIO_NAMES = ["support", "coding", "plan"] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export const AGENT_NAMES = ["Support bot", "Coding agent"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

type Args = Record<string, unknown>;

export type ToolOutcome = {
  /** one line for the console: what the (fake) tool did */
  said: string;
  result: unknown;
  /** how to undo it, kept by Countersign for a later rollback */
  revert?: unknown;
};

export type FakeTool = {
  /** a few words about a call, for the "paused: …" line */
  describe: (args: Args) => string;
  run: (args: Args) => ToolOutcome;
};

export type Scenario = {
  name: ScenarioName;
  agent: AgentName;
  /** for --help */
  title: string;
  /** POST /runs body, without the batch */
  run: {
    externalId: string;
    conversationId?: string;
    metadata: Args;
    requirePlanApproval?: boolean;
  };
  /** the first pause: a batch of calls, or a plan (approved as a whole, before any step) */
  batch: {
    kind?: "action" | "plan";
    calls: ScenarioCall[];
    plan?: {
      summary: string;
      rationale?: string;
      resources?: string[];
      risks?: string[];
      rollback?: string;
    };
    checkpoint?: unknown;
  };
  /**
   * A plan's steps. Once the plan is approved, each step pauses the run again as an action batch
   * of its own (a card per step, as every production action gets), runs if approved, and a
   * rejected step stops the plan there.
   */
  steps?: ScenarioCall[];
};

export type ScenarioCall = {
  toolCallId: string;
  toolName: string;
  args: Args;
  inputSchema?: Args;
  summary?: string;
  risks?: string[];
  costEstimate?: number;
};

const shortId = (bytes = 4) => randomBytes(bytes).toString("hex");

export function money(amount: unknown, currency: unknown): string {
  const value = Number(amount);
  const code = typeof currency === "string" && /^[A-Z]{3}$/.test(currency) ? currency : "USD";
  if (!Number.isFinite(value)) return `${String(amount)} ${code}`;
  return new Intl.NumberFormat("en-US", { style: "currency", currency: code }).format(value);
}

function requireString(args: Args, key: string): string {
  const value = args[key];
  if (typeof value !== "string" || value === "") throw new Error(`${key} must be a string`);
  return value;
}

function requireNumber(args: Args, key: string): number {
  const value = args[key];
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new Error(`${key} must be a number`);
  return value;
}

function requirePaths(args: Args): string[] {
  const paths = args.paths;
  if (!Array.isArray(paths) || !paths.every((p) => typeof p === "string"))
    throw new Error("paths must be a list of strings");
  return paths;
}

export const TOOLS: Record<string, FakeTool> = {
  refund_order: {
    describe: (args) => `${money(args.amount, args.currency)} for order #${String(args.orderId)}`,
    run: (args) => {
      const orderId = requireString(args, "orderId");
      const amount = requireNumber(args, "amount");
      const currency = requireString(args, "currency");
      const refundId = `re_${shortId()}`;
      return {
        said: `refunded ${money(amount, currency)} on order #${orderId} (${refundId})`,
        result: { refundId, orderId, amount, currency, status: "succeeded" },
        revert: { action: "reverse_refund", refundId, orderId, amount, currency },
      };
    },
  },
  delete_files: {
    describe: (args) => {
      const paths = Array.isArray(args.paths) ? args.paths.map(String) : [];
      return `${paths.length} path${paths.length === 1 ? "" : "s"} (${paths.join(", ")})`;
    },
    run: (args) => {
      const paths = requirePaths(args);
      const trash = `.trash/${shortId()}`;
      return {
        said: `deleted ${paths.length} path${paths.length === 1 ? "" : "s"} (moved to ${trash})`,
        result: { deleted: paths, movedTo: trash },
        revert: { action: "restore_files", from: trash, paths },
      };
    },
  },
  merge_pull_request: {
    describe: (args) =>
      `${String(args.repo)}#${String(args.number)} (${String(args.method ?? "merge")})`,
    run: (args) => {
      const repo = requireString(args, "repo");
      const number = requireNumber(args, "number");
      const method = typeof args.method === "string" ? args.method : "merge";
      const sha = shortId(20);
      return {
        said: `merged ${repo}#${number} (${method}) as ${sha.slice(0, 7)}`,
        result: { merged: true, repo, number, method, sha },
        revert: { action: "revert_commit", repo, sha },
      };
    },
  },
  create_db_role: {
    describe: (args) => `role ${String(args.role)} on ${String(args.database)}`,
    run: (args) => {
      const database = requireString(args, "database");
      const role = requireString(args, "role");
      return {
        said: `created role ${role} on ${database} (nothing uses it yet)`,
        result: { database, role, created: true },
        revert: { action: "drop_role", database, role },
      };
    },
  },
  write_vault_secret: {
    describe: (args) => `${String(args.path)} (new version)`,
    run: (args) => {
      const path = requireString(args, "path");
      const version = 8;
      return {
        said: `wrote version ${version} of ${path} (the password itself never leaves Vault)`,
        result: { path, version },
        revert: { action: "restore_secret_version", path, version: version - 1 },
      };
    },
  },
  restart_deployment: {
    describe: (args) => `${String(args.deployment)} (${String(args.strategy ?? "rolling")})`,
    run: (args) => {
      const deployment = requireString(args, "deployment");
      const pods = 3;
      return {
        said: `restarted ${deployment}: ${pods} of ${pods} pods ready on the new secret`,
        result: { deployment, restarted: pods, ready: pods },
      };
    },
  },
  disable_db_role: {
    describe: (args) => `role ${String(args.role)} on ${String(args.database)}`,
    run: (args) => {
      const database = requireString(args, "database");
      const role = requireString(args, "role");
      return {
        said: `disabled role ${role} on ${database} (kept for 24 h for a rollback)`,
        result: { database, role, disabled: true },
        revert: { action: "enable_role", database, role },
      };
    },
  },
};

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  support: {
    name: "support",
    agent: "Support bot",
    title:
      "a support agent asks to refund an order (one call, with a JSON Schema capping the amount)",
    run: {
      externalId: "ticket-88",
      conversationId: "support-thread-88",
      metadata: { demo: true, channel: "email", customer: "Ada Lovelace" },
    },
    batch: {
      calls: [
        {
          toolCallId: "refund-1042",
          toolName: "refund_order",
          args: {
            orderId: "1042",
            amount: 42,
            currency: "USD",
            reason: "Package arrived damaged; the customer sent photos (ticket #88).",
          },
          inputSchema: {
            type: "object",
            required: ["orderId", "amount", "currency", "reason"],
            additionalProperties: false,
            properties: {
              orderId: { type: "string", minLength: 1 },
              amount: { type: "number", exclusiveMinimum: 0, maximum: 500 },
              currency: { type: "string", enum: ["USD", "EUR", "GBP"] },
              reason: { type: "string", minLength: 3 },
            },
          },
          summary: "Refund $42.00 to the customer of order #1042 (damaged package).",
          risks: [
            "Money leaves the company; the payment provider cannot claw a refund back.",
            "This customer already got a $10 coupon for the same order last week.",
          ],
          costEstimate: 42,
        },
      ],
      checkpoint: {
        step: "refund",
        messages: [
          { role: "user", content: "My order #1042 arrived broken. Photos attached." },
          { role: "assistant", content: "Sorry about that! Let me arrange a refund." },
        ],
      },
    },
  },
  coding: {
    name: "coding",
    agent: "Coding agent",
    title: "a coding agent asks to delete files and merge a PR (one batch, two calls)",
    run: {
      externalId: "task-311",
      metadata: { demo: true, repository: "acme/shop", task: "Remove the legacy checkout flow" },
    },
    batch: {
      calls: [
        {
          toolCallId: "delete-legacy",
          toolName: "delete_files",
          args: {
            paths: ["src/checkout/legacy/", "scripts/backfill-2023.ts", ".env.staging"],
          },
          inputSchema: {
            type: "object",
            required: ["paths"],
            additionalProperties: false,
            properties: {
              paths: { type: "array", minItems: 1, items: { type: "string", minLength: 1 } },
            },
          },
          summary: "Delete the legacy checkout code and two files that look unused.",
          risks: [
            ".env.staging is not in git: once deleted it cannot be restored from the repository.",
            "scripts/backfill-2023.ts may still be run by the nightly job on staging.",
          ],
        },
        {
          toolCallId: "merge-128",
          toolName: "merge_pull_request",
          args: { repo: "acme/shop", number: 128, method: "squash" },
          inputSchema: {
            type: "object",
            required: ["repo", "number", "method"],
            additionalProperties: false,
            properties: {
              repo: { type: "string", pattern: "^[^/]+/[^/]+$" },
              number: { type: "integer", minimum: 1 },
              method: { type: "string", enum: ["merge", "squash", "rebase"] },
            },
          },
          summary: "Squash-merge PR #128 “Drop the legacy checkout flow” into main.",
          risks: ["main deploys to production on merge (continuous deployment)."],
        },
      ],
      checkpoint: { step: "cleanup", branch: "drop-legacy-checkout" },
    },
  },
  plan: {
    name: "plan",
    agent: "Coding agent",
    title:
      "a four-step plan to approve (its summary may be edited) before the work starts; then each step asks again",
    run: {
      externalId: "incident-57",
      metadata: { demo: true, incident: "INC-57", service: "checkout-api" },
      requirePlanApproval: true,
    },
    batch: {
      kind: "plan",
      plan: {
        summary: "Rotate the production database credentials of checkout-api.",
        rationale:
          "The current password was pasted into a public gist on Monday and flagged by secret scanning. " +
          "Rotating it closes the leak without downtime if done in four steps, each asked for on its own " +
          "once this plan is approved: 1. create the new role checkout_v2 on orders-prod; " +
          "2. store its password in Vault; 3. restart checkout-api one pod at a time; " +
          "4. disable the old role checkout.",
        resources: [
          "database orders-prod (PostgreSQL, production)",
          "Vault secret secret/checkout/db",
          "deployment checkout-api (3 pods)",
        ],
        risks: [
          "checkout-api pods restart one at a time; in-flight requests may be retried.",
          "If the new secret does not reach the pods, checkout fails until rollback.",
        ],
        rollback:
          "The old role stays (disabled) for 24 h: re-enable it and redeploy checkout-api with the previous Vault version.",
      },
      calls: [],
      checkpoint: { step: 0, of: 4 },
    },
    steps: [
      {
        toolCallId: "step-1",
        toolName: "create_db_role",
        args: {
          database: "orders-prod",
          role: "checkout_v2",
          privileges: ["SELECT", "INSERT", "UPDATE"],
        },
        summary:
          "Step 1 of 4: create the new role checkout_v2 on orders-prod (nothing uses it yet).",
        risks: ["A new login role exists on the production database."],
      },
      {
        toolCallId: "step-2",
        toolName: "write_vault_secret",
        args: {
          path: "secret/checkout/db",
          username: "checkout_v2",
          password: "(generated in Vault)",
        },
        summary:
          "Step 2 of 4: store checkout_v2's password as a new version of secret/checkout/db.",
        risks: ["Pods that restart for any reason from now on pick up the new credentials."],
      },
      {
        toolCallId: "step-3",
        toolName: "restart_deployment",
        args: {
          deployment: "checkout-api",
          namespace: "prod",
          strategy: "rolling",
          maxUnavailable: 1,
        },
        summary:
          "Step 3 of 4: restart checkout-api one pod at a time so it logs in as checkout_v2.",
        risks: ["In-flight checkout requests on a restarting pod are retried by the client."],
      },
      {
        toolCallId: "step-4",
        toolName: "disable_db_role",
        args: { database: "orders-prod", role: "checkout" },
        summary: "Step 4 of 4: disable the leaked role checkout (kept 24 h for a rollback).",
        risks: ["Anything still logging in as checkout (a cron job?) starts failing."],
      },
    ],
  },
};
