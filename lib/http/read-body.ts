import type { IncomingMessage } from "node:http";
import {
  ClientGoneError,
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
 * Requests the production server (lib/http/node-api.ts) hands to route handlers carry no web body:
 * their body is read here straight from Node's request. Wrapping Node's stream in a web
 * ReadableStream for every write cost about 1% of the server's CPU per pause or decision
 * (test/bench/README.md, "Per-request CPU, one at a time"), and this file is the only reader of an
 * API request's body.
 */
/** what a request's entry becomes once its body is read: a second read fails, as a web body's */
const USED = Symbol("body used");
const nodeBodies = new WeakMap<Request, IncomingMessage | typeof USED>();

/** Marks `request`'s body as `source`'s, to be read by readJsonBody (lib/http/node-api.ts). */
export function readBodyFrom(request: Request, source: IncomingMessage): void {
  nodeBodies.set(request, source);
}

// decode() without `stream` keeps no state between calls: one decoder serves every request
const UTF8 = new TextDecoder("utf-8", { fatal: false });

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
  const source = nodeBodies.get(request);
  if (source === USED) throw new TypeError("Body is unusable: it has already been read");
  if (source) nodeBodies.set(request, USED);
  if ((!source && !request.body) || declared === "0") return undefined;

  const bytes = await (source ? nodeBody(source, limit) : webBody(request.body!, limit)).catch(
    (error: unknown) => {
      // Node's own error for a connection closed mid-body ("aborted"), seen through either path
      throw (error as { code?: unknown })?.code === "ECONNRESET" ? new ClientGoneError() : error;
    },
  );
  if (bytes === null) throw new PayloadTooLargeError(limit);
  if (bytes.byteLength === 0) return undefined;

  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type.trim()))
    throw new UnsupportedMediaTypeError();
  const text = UTF8.decode(bytes);
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

/** A web body's bytes, or null once it passes `limit` (the rest is then discarded). */
async function webBody(stream: ReadableStream<Uint8Array>, limit: number): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void discardRest(reader, limit * 16);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * A Node request's body bytes, or null once it passes `limit`: the rest is then discarded as
 * discardRest does, and past 16 × `limit` more the connection is dropped. A client that leaves
 * mid-body fails it with ClientGoneError: a 400 nobody reads, not an unexpected error of the server.
 */
function nodeBody(source: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    // read by something else already: no event would ever come
    if (source.readableEnded || source.destroyed)
      return reject(new TypeError("Body is unusable: it has already been read"));
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      source.off("data", onData);
      source.off("end", onEnd);
      source.off("error", onError);
      source.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      let discarded = 0;
      source.on("data", (rest: Buffer) => {
        discarded += rest.byteLength;
        if (discarded > limit * 16) source.destroy();
      });
      source.on("error", () => undefined); // the client went away
      resolve(null);
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(new ClientGoneError());
    };
    source.on("data", onData);
    source.once("end", onEnd);
    source.once("error", onError);
    source.once("close", onClose);
  });
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
