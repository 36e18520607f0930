import { getDb } from "@/db/client";
import { authenticateCredential, bearerToken, type Actor } from "@/lib/auth/actor";
import type { Credential } from "@/lib/auth/credential-watch";
import { isTrustedOrigin } from "@/lib/auth/better-auth";
import { ForbiddenError, toResponse } from "@/lib/errors";
import { readJsonBody } from "./read-body";
import { jsonText } from "@/lib/json-response";

type Params = Record<string, string>;

type Handler<P extends Params> = (args: {
  request: Request;
  params: P;
  /** the parsed JSON body (undefined for GET or an empty body) */
  body: unknown;
  actor: Actor;
  /** what the actor authenticated with: streams and long-polls end when it is revoked */
  credential: Credential;
}) => Promise<Response>;

/**
 * The edge of every API route: read the body (413/415/400), authenticate (401), call the verb,
 * and map any error to the contract's shape. Handlers stay one line of real work.
 */
export function apiRoute<P extends Params = Params>(handler: Handler<P>) {
  return async (request: Request, context: { params: Promise<P> }): Promise<Response> => {
    try {
      const body = request.method === "GET" ? undefined : await readJsonBody(request);
      const { actor, credential } = await authenticateCredential(getDb(), request.headers);
      if (
        request.method !== "GET" &&
        usesSessionCookie(request) &&
        !isTrustedOrigin(request.headers.get("origin"))
      ) {
        throw new ForbiddenError("A cross-site request cannot act with a reviewer's session.");
      }
      return await handler({ request, params: await context.params, body, actor, credential });
    } catch (error) {
      return toResponse(error);
    }
  };
}

export function json(data: unknown, status = 200): Response {
  return jsonText(JSON.stringify(data), status, { "cache-control": "no-store" });
}

/** A file to download (an export): never cached, never sniffed into something the browser runs. */
export function download(
  file: { body: BodyInit; contentType: string; filename: string },
  headers: Record<string, string> = {},
): Response {
  return new Response(file.body, {
    headers: {
      "content-type": file.contentType,
      "content-disposition": `attachment; filename="${file.filename}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      ...headers,
    },
  });
}

/**
 * Exactly when authenticate() falls back to the session cookie: no Bearer credential. Testing for
 * "no Authorization header" let `Authorization: Basic …` plus a victim's cookie act cross-site.
 */
function usesSessionCookie(request: Request): boolean {
  return bearerToken(request.headers) === null;
}
