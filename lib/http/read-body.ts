import {
  InvalidJsonError,
  InvalidRequestError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from "@/lib/errors";
import { jsonTextTooDeep, tooDeepError } from "./json-depth";
import { setting } from "@/lib/config/settings";
import { assertWellFormedText } from "@/lib/text/stored-text";

export function maxBodyBytes(): number {
  return setting("MAX_BODY_BYTES");
}

/**
 * The request's JSON body. 415 unless it is `application/json`, 413 as soon as it passes the limit
 * (nothing past the limit is read), 400 `invalid_json` when it does not parse, 400
 * `invalid_request` when it nests deeper than json-depth.ts allows, is `null`, or has a string
 * that is not well-formed Unicode (stored-text.ts says why, for data too). An empty body is
 * `undefined` (endpoints whose fields are all optional accept it); `null` is not empty: every
 * body is an object (or, for MCP, an array), and `null` taken as "no body" hid client bugs.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const limit = maxBodyBytes();
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new PayloadTooLargeError(limit);
  if (!request.body || declared === "0") return undefined;

  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void discardRest(reader, limit * 16);
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(value);
  }
  if (size === 0) return undefined;

  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type.trim()))
    throw new UnsupportedMediaTypeError();
  const text = new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
  // Before parsing: nothing may walk a value this deep (json-depth.ts).
  if (jsonTextTooDeep(text)) throw tooDeepError();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new InvalidJsonError(`The request body is not valid JSON: ${(error as Error).message}`);
  }
  if (body === null) {
    throw new InvalidRequestError("Invalid request: (body): expected a JSON object, got null.", [
      { path: "(body)", message: "expected an object, received null" },
    ]);
  }
  assertWellFormedText(body);
  return body;
}

/**
 * Consumes and drops what is left of an oversized body, as Node does for a body nobody read.
 * Cancelling instead destroys the socket mid-upload: the client may get a reset instead of the
 * 413, and a keep-alive connection breaks. Past `cap` more bytes, give up and cancel after all.
 */
async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  cap: number,
): Promise<void> {
  let discarded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      discarded += value.byteLength;
      if (discarded > cap) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // the client went away
  }
}

/** The query string as a plain object (repeated keys keep their last value). */
export function queryOf(request: Request): Record<string, string> {
  return Object.fromEntries(new URL(request.url).searchParams);
}
