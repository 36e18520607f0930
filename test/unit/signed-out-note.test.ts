import { describe, expect, it } from "vitest";
import { signedOutNote } from "@/app/(auth)/sign-in/signed-out-note";

// Issue 26, item 9: the sign-in page a reviewer lands on after "Sign out everywhere" says what
// happened, from counts in its address, and never shows text typed into a link.

describe("the signed-out note", () => {
  it("says how many sessions ended and tokens were revoked", () => {
    expect(signedOutNote({ "signed-out": "everywhere", sessions: "3", tokens: "2" })).toBe(
      "You signed out everywhere: 3 sessions of yours ended, on every device and browser, this one included. 2 personal tokens were revoked. Sign in again to go on.",
    );
    expect(signedOutNote({ "signed-out": "everywhere", sessions: "1", tokens: "0" })).toContain(
      "1 session of yours ended",
    );
    expect(signedOutNote({ "signed-out": "everywhere", sessions: "1", tokens: "0" })).toContain(
      "Your personal tokens still work.",
    );
  });

  it("is nothing without the marker, and reads only digits from the address", () => {
    expect(signedOutNote({})).toBeNull();
    expect(signedOutNote({ "signed-out": "somewhere" })).toBeNull();
    const forged = signedOutNote({
      "signed-out": "everywhere",
      sessions: "<b>all</b>",
      tokens: ["1", "2"],
    })!;
    expect(forged).toContain("every session of yours ended");
    expect(forged).not.toContain("<b>");
  });
});
