// The text of a JSON answer — lib/http/api-route.ts `json`, lib/errors.ts `toResponse` — kept
// beside its Response so that the production server (lib/http/node-api.ts) writes it in one go
// instead of reading it back through the Response's web stream: on a pause or a decision that
// read-back cost about a tenth of a millisecond of CPU, as much as a fifth of what the floor
// spends on the whole request (test/bench/README.md). A Response not made here is streamed as
// before. It imports nothing: lib/errors, below lib/http, makes such answers too.

const texts = new WeakMap<Response, string>();

/** A JSON answer whose body is `text`, with `headers`. */
export function jsonText(text: string, status: number, headers: Record<string, string>): Response {
  const response = new Response(text, {
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
