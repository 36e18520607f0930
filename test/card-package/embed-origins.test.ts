import { describe, expect, it } from "vitest";
import { embedAllowedOrigins, embedContentSecurityPolicy } from "@/app/embed/allowed-origins";
import {
  decisionMessage,
  messageTargets,
  settlementKey,
  type ParentHints,
} from "@/app/embed/decision-message";
import { dana, decided, decision, makeBatch } from "@/test/components/review-card-fixtures";

// Who may frame /embed/… (EMBED_ALLOWED_ORIGINS) and who hears its decision messages.

describe("EMBED_ALLOWED_ORIGINS", () => {
  it("keeps exact origins, normalized and deduplicated", () => {
    expect(
      embedAllowedOrigins(
        " https://App.Example.com , http://127.0.0.1:4330,https://app.example.com:443/,, http://[::1]:8080",
      ),
    ).toEqual(["https://app.example.com", "http://127.0.0.1:4330", "http://[::1]:8080"]);
  });

  it("ignores anything wider than one origin: framing fails closed", () => {
    expect(
      embedAllowedOrigins(
        "*, https://*.example.com, https://a.example/path, https://u:p@b.example, ftp://c.example, " +
          "javascript:alert(1), 'self', https://d.example;script-src *, not a url",
      ),
    ).toEqual([]);
    expect(embedAllowedOrigins(undefined)).toEqual([]);
  });

  it("frames for the app itself and the configured hosts only", () => {
    // The pages' policy, with the embed's own framing directive last.
    expect(embedContentSecurityPolicy("n0nce", [])).toMatch(/; frame-ancestors 'self'$/);
    expect(
      embedContentSecurityPolicy("n0nce", ["https://a.example", "http://127.0.0.1:4330"]),
    ).toMatch(
      /^default-src 'self'; .*; frame-ancestors 'self' https:\/\/a\.example http:\/\/127\.0\.0\.1:4330$/,
    );
  });
});

describe("decision messages", () => {
  const self = "https://countersign.example";
  const allowed = ["https://desk.example", "https://chat.example"];
  const hints = (overrides: Partial<ParentHints>): ParentHints => ({
    self,
    sameOriginParent: false,
    ancestorOrigin: null,
    referrer: "",
    ...overrides,
  });

  it("go only to the parent's origin, when it is an allowed one", () => {
    expect(messageTargets(allowed, hints({ ancestorOrigin: "https://chat.example" }))).toEqual([
      "https://chat.example",
    ]);
    expect(
      messageTargets(allowed, hints({ referrer: "https://desk.example/tickets/4312?x=1" })),
    ).toEqual(["https://desk.example"]);
    expect(messageTargets(allowed, hints({ ancestorOrigin: "https://evil.example" }))).toEqual([]);
    expect(messageTargets(allowed, hints({ ancestorOrigin: "null" }))).toEqual([]);
    expect(messageTargets(allowed, hints({ sameOriginParent: true }))).toEqual([self]);
  });

  it("try each allowed origin when the parent is unknown, and never '*'", () => {
    // No ancestorOrigins (Firefox) and the referrer is the frame's own sign-in page.
    expect(messageTargets(allowed, hints({ referrer: `${self}/sign-in?next=x` }))).toEqual(allowed);
    expect(messageTargets([], hints({}))).toEqual([]);
    expect(messageTargets(allowed, hints({})).includes("*")).toBe(false);
  });

  it("are sent for settlements, not for votes short of the quorum or claims", () => {
    const pending = makeBatch({ calls: [{ ...makeBatch().calls[0]!, requiredApprovals: 2 }] });
    const voted = {
      ...pending,
      calls: pending.calls.map((call) => ({
        ...call,
        votes: [{ reviewer: dana, outcome: "approved" as const, revision: 1, at: "x" }],
      })),
      claim: { by: dana, expiresAt: "x", locked: false },
    };
    expect(settlementKey(voted)).toBe(settlementKey(pending));
    const approved = decided(pending, decision({ by: dana }));
    expect(settlementKey(approved)).not.toBe(settlementKey(pending));
    expect(decisionMessage(approved)).toEqual({
      type: "countersign:decision",
      batchId: "batch-1",
      status: "decided",
      outcome: "approved",
      calls: [{ id: "call-1", status: "approved", decision: approved.calls[0]!.decision }],
    });
  });
});
