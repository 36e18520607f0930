// Validation problems as sentences a person can act on, keyed by the field they belong to.
// The API keeps zod's wording (scripts match on it); forms show these instead. Pure, so the
// server action that answers and the tests share it.

/** The parts of a zod issue the wording needs (zod v4's `$ZodIssue`, or a hand-made one). */
export type IssueDetail = {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  origin?: string;
  expected?: string;
  format?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
};

/** How a field is spoken of: what to enter in it (`a whole number of seconds`), or to choose. */
type FieldHint = { enter?: string; choose?: string };

// Keyed by the last segment of an issue's path: the same names recur across forms (a queue's
// timeouts, a rule's costs), so one table words them alike everywhere.
const FIELD_HINTS: Record<string, FieldHint> = {
  name: { enter: "a name" },
  email: { enter: "an email address, like name@example.com" },
  password: { enter: "a password" },
  setupCode: { enter: "the setup code" },
  requiredApprovals: { enter: "a whole number of approvals" },
  defaultTimeoutSecs: { enter: "a whole number of seconds" },
  approveOnTimeoutMinSecs: { enter: "a whole number of seconds" },
  digestMinutes: { enter: "a whole number of minutes" },
  minCost: { enter: "a cost" },
  costAbove: { enter: "a cost" },
  costEstimate: { enter: "a cost" },
  toolName: { enter: "a tool name" },
  toolPattern: { enter: "a tool name or glob" },
  agent: { enter: "an agent name or key id" },
  path: { enter: "an argument path" },
  value: { enter: "a value" },
  slackChannelId: { enter: "a Slack channel id, such as C0123ABCD" },
  issuer: { enter: "the issuer's URL, like https://login.example.com" },
  displayName: { enter: "a button name" },
  clientId: { enter: "the client id" },
  queue: { choose: "a queue" },
  effect: { choose: "an effect" },
  role: { choose: "a role" },
  claimMode: { choose: "how review claims work" },
  escalationQueueId: { choose: "a queue to escalate to" },
};

// zod's own messages start so; anything else was written for people by whoever made the schema
// ("enter the setup code") and is kept, as a sentence.
const ZOD_DEFAULT = /^(Invalid|Too small|Too big|Unrecognized)/;

/** "a queue cannot escalate to itself" → "A queue cannot escalate to itself." */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return trimmed;
  const phrased = /^an? /.test(trimmed) ? `Enter ${trimmed}` : trimmed;
  // Only a plain word is capitalized: "http://…" or "`name`" stays as written.
  const capital = /^[a-z]+\b(?![:/.])/.test(phrased)
    ? phrased[0]!.toUpperCase() + phrased.slice(1)
    : phrased;
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

function hintFor(path: readonly PropertyKey[]): FieldHint {
  const last = [...path].reverse().find((segment) => typeof segment === "string");
  return (typeof last === "string" && FIELD_HINTS[last]) || {};
}

const plural = (n: number | bigint, one: string) => `${n} ${one}${Number(n) === 1 ? "" : "s"}`;

/** One issue as a sentence: what to enter or choose, and the limit it missed. */
export function plainIssueMessage(issue: IssueDetail): string {
  if (issue.message && !ZOD_DEFAULT.test(issue.message)) return asSentence(issue.message);
  const hint = hintFor(issue.path);
  const required = hint.choose ? `Choose ${hint.choose}.` : `Enter ${hint.enter ?? "a value"}.`;
  switch (issue.code) {
    case "invalid_type": {
      // A whole-number field given 1.5 answers `expected int`; given nothing or text, `number`.
      if (issue.expected === "int") {
        const what = hint.enter?.includes("whole number") ? hint.enter : "a whole number";
        return `Enter ${what}.`;
      }
      if (issue.expected === "number") return `Enter ${hint.enter ?? "a number"}.`;
      return required;
    }
    case "too_small":
    case "too_big": {
      const limit = issue.code === "too_small" ? issue.minimum : issue.maximum;
      if (limit === undefined) return required;
      if (issue.origin === "string") {
        if (issue.code === "too_small") {
          return Number(limit) <= 1 ? required : `Use at least ${plural(limit, "character")}.`;
        }
        return `Use at most ${plural(limit, "character")}.`;
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return issue.code === "too_small" ? `Add at least ${limit}.` : `Add no more than ${limit}.`;
      }
      // numbers (and dates, which no form here takes)
      const what = hint.enter ?? "a number";
      const bound =
        issue.code === "too_small"
          ? issue.inclusive === false
            ? `more than ${limit}`
            : `${limit} or more`
          : issue.inclusive === false
            ? `less than ${limit}`
            : `${limit} or less`;
      return `Enter ${what}, ${bound}.`;
    }
    case "invalid_value":
      return hint.choose ? `Choose ${hint.choose}.` : "Choose one of the options offered.";
    case "invalid_format":
      if (issue.format === "email") return "Enter an email address, like name@example.com.";
      if (issue.format === "url") return "Enter a web address, like https://example.com.";
      return `Enter ${hint.enter ?? "a value"} in the expected format.`;
    case "unrecognized_keys":
      return "The form sent a field the server does not take; reload the page and try again.";
    default:
      return required;
  }
}

/** Where a problem belongs: its path joined with dots (`argPredicates.0.path`); "" for the whole form. */
export function fieldKey(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

/**
 * The first problem of each field, as a sentence, keyed by `fieldKey`. Problems with no path
 * (the input as a whole) are under "", for the form-level message.
 */
export function fieldErrorsFrom(issues: readonly IssueDetail[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    const key = fieldKey(issue.path);
    errors[key] ??= plainIssueMessage(issue);
  }
  return errors;
}
