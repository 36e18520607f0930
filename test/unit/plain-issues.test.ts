import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionError } from "@/app/action-result";
import { formLevelMessages } from "@/components/forms/use-field-errors";
import { numberField } from "@/components/queue-settings/format";
import { parseInput } from "@/lib/input/parse";
import { InvalidRequestError } from "@/lib/errors";
import { fieldErrorsFrom, plainIssueMessage } from "@/lib/forms/plain-issues";
import { CreateFirstAdminInput } from "@/lib/admin/create-first-admin";
import { NotificationPreferenceInput } from "@/lib/notifications/preferences";
import { PolicyRuleInput, PolicyTryInput } from "@/lib/policies/policy-input";
import { CreateQueueInput } from "@/lib/queues/create-queue";
import { UpdateQueueInput } from "@/lib/queues/update-queue";
import { RoutingRuleInput } from "@/lib/routing/rule-input";

/** The field errors a form would show for `input` against the real schema. */
function fieldErrorsFor(schema: z.ZodType, input: unknown): Record<string, string> {
  const result = schema.safeParse(input);
  if (result.success) throw new Error("expected the input to be refused");
  return fieldErrorsFrom(result.error.issues);
}

describe("plain-language field errors", () => {
  it("words a queue's number fields with their unit and the limit missed", () => {
    expect(
      fieldErrorsFor(CreateQueueInput, { name: "Q", requiredApprovals: 0, defaultTimeoutSecs: 0 }),
    ).toEqual({
      requiredApprovals: "Enter a whole number of approvals, 1 or more.",
      defaultTimeoutSecs: "Enter a whole number of seconds, 1 or more.",
    });
    expect(fieldErrorsFor(CreateQueueInput, { name: "Q", requiredApprovals: 21 })).toEqual({
      requiredApprovals: "Enter a whole number of approvals, 20 or less.",
    });
    expect(fieldErrorsFor(UpdateQueueInput, { approveOnTimeoutMinSecs: 1.5 })).toEqual({
      approveOnTimeoutMinSecs: "Enter a whole number of seconds.",
    });
    expect(
      fieldErrorsFor(NotificationPreferenceInput, {
        delivery: "digest",
        digestMinutes: 3,
        events: {},
      }),
    ).toMatchObject({ digestMinutes: "Enter a whole number of minutes, 5 or more." });
  });

  it("says -5 must be 1 or more: the form sends it as a number, not as text", () => {
    // The old form helper kept anything but digits as text, so zod answered
    // "expected number, received string" for -5.
    expect(numberField("-5")).toBe(-5);
    expect(numberField(" 1.5 ")).toBe(1.5);
    expect(numberField("")).toBe("");
    expect(numberField("abc")).toBe("abc");
    expect(
      fieldErrorsFor(CreateQueueInput, { name: "Q", defaultTimeoutSecs: numberField("-5") }),
    ).toEqual({ defaultTimeoutSecs: "Enter a whole number of seconds, 1 or more." });
    // An empty box: a number is asked for, in the field's own words.
    expect(
      fieldErrorsFor(CreateQueueInput, { name: "Q", requiredApprovals: numberField("") }),
    ).toEqual({ requiredApprovals: "Enter a whole number of approvals." });
  });

  it("asks for what an empty or too long text field needs, and keeps a schema's own words", () => {
    expect(fieldErrorsFor(CreateQueueInput, { name: "   " })).toEqual({ name: "Enter a name." });
    expect(fieldErrorsFor(CreateQueueInput, { name: "x".repeat(101) })).toEqual({
      name: "Use at most 100 characters.",
    });
    expect(
      fieldErrorsFor(CreateFirstAdminInput, {
        setupCode: "",
        name: "Ada",
        email: "not an email",
        password: "short",
      }),
    ).toEqual({
      setupCode: "Enter the setup code.",
      email: "Enter an email address, like name@example.com.",
      password: "Must be at least 8 characters.",
    });
    expect(fieldErrorsFor(UpdateQueueInput, { slackChannelId: "#general" })).toEqual({
      slackChannelId: "Enter a Slack channel id, such as C0123ABCD (not the channel's name).",
    });
  });

  it("words rule forms, nested paths included", () => {
    expect(fieldErrorsFor(RoutingRuleInput, { name: "r", queue: "q", minCost: -1 })).toEqual({
      minCost: "Enter a cost, 0 or more.",
    });
    expect(
      fieldErrorsFor(PolicyRuleInput, {
        name: "r",
        effect: "",
        costAbove: "abc",
        argPredicates: [{ path: "", op: "equals", value: 1 }],
      }),
    ).toEqual({
      effect: "Choose an effect.",
      costAbove: "Enter a cost.",
      "argPredicates.0.path": expect.stringMatching(/^[A-Z].*\.$/),
    });
    expect(
      fieldErrorsFor(PolicyTryInput, {
        queue: "q",
        call: { toolName: "", args: {}, costEstimate: -2 },
      }),
    ).toEqual({
      "call.toolName": "Enter a tool name.",
      "call.costEstimate": "Enter a cost, 0 or more.",
    });
  });

  it("never shows zod's own wording", () => {
    const schema = z.object({
      a: z.int().min(1),
      b: z.string().min(3),
      c: z.array(z.string()).max(1),
      d: z.enum(["x"]),
    });
    const errors = fieldErrorsFor(schema, { a: "x", b: "ab", c: ["1", "2"], d: "y" });
    for (const sentence of Object.values(errors)) {
      expect(sentence).not.toMatch(/Too small|Too big|Invalid|expected|received/);
      expect(sentence).toMatch(/^[A-Z].*\.$/);
    }
    expect(errors).toEqual({
      a: "Enter a number.",
      b: "Use at least 3 characters.",
      c: "Add no more than 1.",
      d: "Choose one of the options offered.",
    });
    expect(plainIssueMessage({ code: "custom", path: ["x"], message: "no such queue" })).toBe(
      "No such queue.",
    );
  });
});

describe("server actions answer field errors; the API's error shape stays as it was", () => {
  it("an action's invalid input carries one sentence per field", () => {
    let thrown: unknown;
    try {
      parseInput(CreateQueueInput, { name: "", requiredApprovals: -5 });
    } catch (error) {
      thrown = error;
    }
    const failure = actionError(thrown);
    expect(failure).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: "2 fields need a change.",
      fieldErrors: {
        name: "Enter a name.",
        requiredApprovals: "Enter a whole number of approvals, 1 or more.",
      },
    });
    // The API body keeps zod's issues as `{ path, message }` and nothing more.
    const body = (thrown as InvalidRequestError).toJSON();
    expect(Object.keys(body.error).sort()).toEqual(["code", "issues", "message"]);
    expect(body.error.message).toMatch(/^Invalid request: name: /);
    expect(body.error.issues).toEqual([
      { path: "name", message: expect.stringContaining("Too small") },
      { path: "requiredApprovals", message: expect.stringContaining("Too small") },
    ]);
  });

  it("a verb's hand-written issue becomes a sentence on its field", () => {
    const failure = actionError(
      new InvalidRequestError("Invalid request: escalationQueueId: no such queue", [
        { path: "escalationQueueId", message: "no such queue" },
      ]),
    );
    expect(failure.fieldErrors).toEqual({ escalationQueueId: "No such queue." });
    expect(failure.message).toBe("No such queue.");
  });

  it("the form-level message holds only what no field shows", () => {
    const conflict = {
      ok: false as const,
      code: "already_exists",
      message: "A queue named Q exists.",
    };
    expect(formLevelMessages(conflict, ["name"])).toEqual(["A queue named Q exists."]);
    const invalid = {
      ok: false as const,
      code: "invalid_request",
      message: "2 fields need a change.",
      fieldErrors: { name: "Enter a name.", "": "Something about the whole form." },
    };
    expect(formLevelMessages(invalid, ["name"])).toEqual(["Something about the whole form."]);
    expect(formLevelMessages(null, ["name"])).toEqual([]);
  });
});
