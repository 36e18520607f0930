import { z } from "zod";
import { InvalidRequestError } from "@/lib/errors";

// Text the API stores (names, reasons, summaries, queue and rule names…) is refused at the edge
// when SQLite or a strict JSON parser would not give it back as sent (issue 24):
// - a NUL ends the string for SQLite's text functions: "a\u0000b" was stored but read back as
//   "a", and the rename's compare-and-swap on the old name then never matched (every later
//   rename a 500);
// - an unpaired UTF-16 surrogate is not Unicode: the column kept U+FFFD while the event kept a
//   "\ud800" escape, which strict JSON parsers (I-JSON, RFC 7493) refuse in /audit and exports;
// - other control characters (escape sequences, bells, C1 codes) only ever hide or spoof text in
//   a page, a CSV export, a terminal or a log line.
// Multi-line text (reasons, summaries, descriptions) keeps tab, line feed and carriage return,
// which textareas send; a single-line text (a name) refuses them too. JSON values an agent sends
// as data (tool args, metadata, checkpoints) are not text: they keep control characters, which
// JSON escapes, and only lone surrogates are refused, for the whole body (see wellFormedPath).

export const CONTROL_CHARACTERS_MESSAGE = "must not contain control characters";
export const LINE_BREAK_MESSAGE = "must be one line, without line breaks or tabs";
export const ILL_FORMED_MESSAGE = "is not valid Unicode text (it has an unpaired surrogate)";

/** C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F): Unicode's control characters (Cc). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The same without tab, line feed and carriage return. */
const CONTROL_BUT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LINE_BREAK_OR_TAB = /[\t\n\r]/;
/** With the `u` flag a pair is one code point, so only an unpaired half matches. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * A name that comes from elsewhere and cannot be refused (an identity provider's profile at a
 * single sign-on): control characters and unpaired surrogates become spaces, runs of spaces one,
 * trimmed and cut to `max`; empty when nothing printable is left.
 */
export function storableName(name: string, max = 100): string {
  return name
    .replace(new RegExp(CONTROL.source, "g"), " ")
    .replace(new RegExp(LONE_SURROGATE.source, "gu"), " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, max)
    .trim();
}

/** Whether `text` is well-formed UTF-16 (no unpaired surrogate), so it can be encoded as UTF-8. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Whether `text` holds a control character a text of this kind may not keep. */
export function hasControlCharacter(text: string, multiline: boolean): boolean {
  return (multiline ? CONTROL_BUT_WHITESPACE : CONTROL).test(text);
}

function storedText(multiline: boolean) {
  return z.string().check((ctx) => {
    const text = ctx.value;
    if (!isWellFormedText(text))
      ctx.issues.push({ code: "custom", input: text, message: ILL_FORMED_MESSAGE });
    else if (!multiline && LINE_BREAK_OR_TAB.test(text) && !hasControlCharacter(text, true))
      ctx.issues.push({ code: "custom", input: text, message: LINE_BREAK_MESSAGE });
    else if (hasControlCharacter(text, multiline))
      ctx.issues.push({ code: "custom", input: text, message: CONTROL_CHARACTERS_MESSAGE });
  });
}

/**
 * A single line of text the API stores: a name, an id an agent chose, a tool name. Chain bounds
 * and `.trim()` as on `z.string()` (the check runs first, so a trailing newline is refused, not
 * trimmed away: an API caller learns its input was not what it meant).
 */
export const SingleLineText = storedText(false);

/** Free text the API stores that may span lines: a reason, a summary, a description. */
export const MultiLineText = storedText(true);

/**
 * The path (`calls.0.args.note`) of the first string or key in a parsed JSON value that is not
 * well-formed Unicode, or null. A request body can only carry one as a `\uD800` escape (the UTF-8
 * decoder already replaced broken bytes); stored and sent back, it would make the answer JSON
 * that strict parsers refuse. Walks with an explicit stack: the body's depth is bounded
 * (json-depth.ts), its width is not.
 */
export function illFormedTextPath(value: unknown): string | null {
  const stack: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value === "string") {
      if (!isWellFormedText(next.value)) return next.path.join(".") || "(body)";
      continue;
    }
    if (next.value === null || typeof next.value !== "object") continue;
    const entries = Array.isArray(next.value)
      ? next.value.map((child, index) => [String(index), child] as const)
      : Object.entries(next.value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const path = [...next.path, key];
      if (!isWellFormedText(key)) return path.join(".");
      stack.push({ value: child, path });
    }
  }
  return null;
}

/** Throws the contract's `400 invalid_request` naming the first ill-formed string of `value`. */
export function assertWellFormedText(value: unknown, prefix?: string): void {
  const found = illFormedTextPath(value);
  if (found === null) return;
  const path = prefix ? (found === "(body)" ? prefix : `${prefix}.${found}`) : found;
  throw new InvalidRequestError(`Invalid request: ${path}: ${ILL_FORMED_MESSAGE}`, [
    { path, message: ILL_FORMED_MESSAGE },
  ]);
}
