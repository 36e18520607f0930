import { after } from "next/server";
import { ZodError } from "zod";
import {
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthenticatedError,
  toResponse,
} from "@/lib/errors";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { slackConfigured, slackSigningSecret } from "@/lib/slack/config";
import {
  handleSlackInteraction,
  SlackInputError,
  SlackPayload,
} from "@/lib/slack/handle-interaction";
import { verifySlackSignature } from "@/lib/slack/verify-signature";

// Slack's interactivity request URL: a button clicked or a modal submitted on a card Countersign
// posted (lib/slack). Slack signs each request with the app's signing secret; the signature is
// checked before anything else is read or done, so an unsigned, tampered or replayed request is a
// 401 that changes nothing. Slack wants an answer within 3 s: the decision is made before the
// answer, what the user is told and the message's update after it (next/server `after`).

export const dynamic = "force-dynamic";

/** Slack's interaction payloads are a few KiB; nothing bigger is read. */
const MAX_BYTES = 256 * 1024;

export async function POST(request: Request): Promise<Response> {
  try {
    const secret = slackSigningSecret();
    if (!secret || !slackConfigured()) throw new NotFoundError("Endpoint");
    const body = await readText(request);
    const signed = verifySlackSignature({
      secret,
      timestamp: request.headers.get("x-slack-request-timestamp"),
      signature: request.headers.get("x-slack-signature"),
      body,
    });
    if (!signed)
      throw new UnauthenticatedError(
        "Not a request from Slack: its signature is missing, wrong, or older than five minutes.",
      );

    const payload = parsePayload(body);
    const result = await handleSlackInteraction(payload);
    after(() =>
      result
        .later()
        .catch((error) => console.error("Answering a Slack interaction failed:", error)),
    );
    return result.body
      ? Response.json(result.body)
      : new Response(null, { status: 200, headers: { "cache-control": "no-store" } });
  } catch (error) {
    if (error instanceof SlackInputError)
      return toResponse(new InvalidRequestError(`Invalid request: ${error.message}`));
    if (error instanceof ZodError)
      return toResponse(
        new InvalidRequestError(
          "Invalid request: not a Slack interaction payload Countersign sent.",
          error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
        ),
      );
    return toResponse(error);
  }
}

async function readText(request: Request): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BYTES) throw new PayloadTooLargeError(MAX_BYTES);
  const text = await request.text();
  if (Buffer.byteLength(text) > MAX_BYTES) throw new PayloadTooLargeError(MAX_BYTES);
  return text;
}

/** Slack posts `payload=<JSON>` form-encoded. */
function parsePayload(body: string): SlackPayload {
  const raw = new URLSearchParams(body).get("payload");
  if (raw === null) throw new SlackInputError("the body has no payload field.");
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new SlackInputError("the payload is not JSON.");
  }
  return SlackPayload.parse(json);
}

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
