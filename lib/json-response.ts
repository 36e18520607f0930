// The text of a JSON answer — lib/http/api-route.ts `json`, lib/errors.ts `toResponse` — kept
// beside its Response so that the production server (lib/http/node-api.ts) writes it in one go
// instead of reading it back through the Response's web stream: on a pause or a decision that
// read-back cost about a tenth of a millisecond of CPU, as much as a fifth of what the floor
// spends on the whole request (test/bench/README.md). A Response not made here is streamed as
// before. It imports nothing: lib/errors, below lib/http, makes such answers too.
//
// Nor is the web stream built: a Response made with a string body builds a byte stream for it
// at once (about 2–2.5% of the server's CPU per pause or decision: test/bench/README.md,
// "Per-request CPU, one at a time"), which the production server never reads. A JSON answer is
// made without a body and builds the Response it stands for only when something reads its body
// (Next.js under `next dev`, the hosted MCP gateways' in-process calls, tests).

const texts = new WeakMap<Response, string>();

/** A Response whose body is `text`, built as such only when its body is read. */
class JsonTextResponse extends Response {
  readonly #text: string;
  #read: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    super(null, init);
    this.#text = text;
  }

  /** Status and headers as they are now: some callers add a header after the answer is made. */
  #init(): ResponseInit {
    return { status: this.status, statusText: this.statusText, headers: this.headers };
  }

  /** The Response with the body, built on first use; every body read goes to it. */
  #withBody(): Response {
    return (this.#read ??= new Response(this.#text, this.#init()));
  }

  override get body() {
    return this.#withBody().body;
  }
  override get bodyUsed() {
    return this.#read?.bodyUsed ?? false;
  }
  override text() {
    return this.#withBody().text();
  }
  override json() {
    return this.#withBody().json();
  }
  override arrayBuffer() {
    return this.#withBody().arrayBuffer();
  }
  override blob() {
    return this.#withBody().blob();
  }
  override bytes() {
    return this.#withBody().bytes();
  }
  override formData() {
    return this.#withBody().formData();
  }
  override clone(): Response {
    // a used body cannot be cloned: the Response with the body says so
    if (this.#read) return this.#read.clone();
    const clone = new JsonTextResponse(this.#text, this.#init());
    texts.set(clone, this.#text);
    return clone;
  }
}

/** A JSON answer whose body is `text`, with `headers`. */
export function jsonText(text: string, status: number, headers: Record<string, string>): Response {
  const response = new JsonTextResponse(text, {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
  texts.set(response, text);
  return response;
}

/** The whole body of a Response made by `jsonText`, else undefined. */
export function bodyText(response: Response): string | undefined {
  return texts.get(response);
}
