import { InvalidRequestError } from "@/lib/errors";

// Deeply nested JSON overflows the stack of everything that walks it recursively (canonical JSON
// for actionHash, serialization, zod): ~1,800 levels of args answered 500. No honest tool call
// nests that deep, so bodies are refused past MAX_JSON_DEPTH levels before anything walks them.
// Both checks here are loops, never recursion, so they cannot overflow themselves.

/** Objects and arrays inside one another, the body itself counted as the first level. */
export const MAX_JSON_DEPTH = 256;

/** The 400 a too-deep body or argument gets (`path` names it: `(body)`, `editedArgs`). */
export function tooDeepError(path = "(body)", max = MAX_JSON_DEPTH): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid request: ${path}: JSON may nest objects and arrays at most ${max} levels deep.`,
    [{ path, message: `nested deeper than ${max} levels` }],
  );
}

/**
 * Whether JSON text nests objects and arrays deeper than `max`: one pass over the characters,
 * skipping strings (a `[` inside a string is text). Meant for text about to be parsed; on text
 * that is not JSON the answer means nothing, and the parser refuses it anyway.
 */
export function jsonTextTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/**
 * Throws `tooDeepError(path)` when a parsed value (a server action's argument, which React
 * decodes without our reader) nests deeper than `max`. Walks with an explicit stack. React's reply
 * may share one object in several places, so an object is walked again only when reached deeper
 * than before: the deepest path counts, a cycle ends at the limit, and the work stays bounded
 * (each object is walked at most `max` times).
 */
export function assertJsonDepth(value: unknown, path = "(body)", max = MAX_JSON_DEPTH): void {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  const deepestSeen = new Map<object, number>();
  while (stack.length > 0) {
    const { value: next, depth } = stack.pop()!;
    if (next === null || typeof next !== "object") continue;
    if (depth > max) throw tooDeepError(path, max);
    if ((deepestSeen.get(next) ?? 0) >= depth) continue;
    deepestSeen.set(next, depth);
    for (const child of Array.isArray(next) ? next : Object.values(next)) {
      if (child !== null && typeof child === "object")
        stack.push({ value: child, depth: depth + 1 });
    }
  }
}
