import { describe, expect, it } from "vitest";
import { revealInvisible } from "@/components/review-card/reveal";

describe("revealInvisible", () => {
  it("tags bidi controls, zero-width marks and C0/C1 controls; keeps text, breaks, tabs and joiners", () => {
    expect(revealInvisible("invoice_\u202Etxt.exe\u202C")).toBe("invoice_⟨U+202E⟩txt.exe⟨U+202C⟩");
    expect(revealInvisible("\u2067a\u2069\u200Fb\u200B\uFEFF")).toBe(
      "⟨U+2067⟩a⟨U+2069⟩⟨U+200F⟩b⟨U+200B⟩⟨U+FEFF⟩",
    );
    expect(revealInvisible("nul\u0000 esc\u001b[31m nel\u0085 del\u007f")).toBe(
      "nul⟨U+0000⟩ esc⟨U+001B⟩[31m nel⟨U+0085⟩ del⟨U+007F⟩",
    );
    const kept = "line\nbreak\ttab 👨\u200D👩\u200D👧 می\u200Cخواهم <b>é</b>";
    expect(revealInvisible(kept)).toBe(kept);
  });
});
