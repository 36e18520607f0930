// Agent text can hold characters a reviewer cannot see: bidi overrides and isolates, which
// reorder the text around them ("Trojan Source": `invoice_‮txt.exe` reads as `invoice_exe.txt`),
// zero-width marks, and C0/C1 controls (NUL, a terminal's colour escapes). Shown as they are,
// a reviewer would approve text that reads otherwise than it says. Each is replaced by a visible
// tag such as ⟨U+202E⟩; line breaks and tabs stay, and so do the joiners emoji and many scripts
// need (U+200C, U+200D).

const INVISIBLE =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

export function revealInvisible(text: string): string {
  return text.replace(
    INVISIBLE,
    (char) => `⟨U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
