import { z } from "zod";
import { getDb } from "@/db/client";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import { loadBatchView } from "@/lib/read-models/batch-run-views";
import { decideBatch } from "@/lib/approvals/decide-batch";
import type { ReviewerActor } from "@/lib/auth/actor";
import { ApiError, NotFoundError } from "@/lib/errors";
import { Id } from "@/lib/ids";
import { slackClient } from "./config";
import { deliverSlack } from "./deliver-slack";
import { planSlack } from "./plan-slack";
import {
  APPROVE_ACTION,
  REASON_BLOCK,
  REASON_INPUT,
  REJECT_ACTION,
  REJECT_MODAL,
  rejectModal,
} from "./render-message";
import { reviewerForSlackUser } from "./slack-users";
import { MultiLineText } from "@/lib/text/stored-text";

// What a click in Slack does, once the request's signature has been checked (the route does that
// before anything else). The Slack user must be an active Countersign reviewer of the card's
// queue (matched by email, slack-users.ts); anyone else is told so in a message only they see,
// and nothing is written. A decision goes through decideBatch, the compare-and-swap verb behind
// the browser's "Approve all" / "Reject all", with the revisions the message showed: whoever
// loses a race (against the browser, another Slack user, a policy or the deadline) gets the
// verb's own "Already approved by …" answer. The message itself is brought up to date by the
// Slack outbox, which this nudges once the answer has gone back to Slack.

const SlackUser = z.object({ id: Id });
const Revisions = z.record(Id, z.int().min(1));

const BlockActions = z.object({
  type: z.literal("block_actions"),
  user: SlackUser,
  trigger_id: z.string().max(500).optional(),
  channel: z.object({ id: Id }).optional(),
  container: z.object({ channel_id: Id.optional() }).optional(),
  actions: z
    .array(z.object({ action_id: z.string().max(255), value: z.string().max(2000).optional() }))
    .min(1),
});

const ViewSubmission = z.object({
  type: z.literal("view_submission"),
  user: SlackUser,
  view: z.object({
    callback_id: z.string().max(255),
    private_metadata: z.string().max(3000),
    state: z.object({
      values: z.record(
        z.string(),
        z.record(z.string(), z.object({ value: MultiLineText.max(4000).nullish() })),
      ),
    }),
  }),
});

export const SlackPayload = z.object({ type: z.string().max(100) }).passthrough();
export type SlackPayload = z.infer<typeof SlackPayload>;

/** The button's value, and the modal's private metadata (the value plus where to answer). */
const CardRef = z.object({ b: Id, r: Revisions });
const ModalRef = CardRef.extend({ c: Id });

/** What the route answers Slack at once, and the work it leaves for after that answer. */
export type InteractionResult = {
  body: Record<string, unknown> | null;
  later: () => Promise<void>;
};

const nothingLater = async () => {};

/** The outbox posts and updates within its poll anyway; this just does it now. */
async function refreshMessages() {
  await planSlack();
  await deliverSlack();
}

async function tell(channel: string | undefined, user: string, text: string) {
  // Without a channel (a click in an app's home) there is nowhere to answer ephemerally.
  if (!channel) return;
  await slackClient().chat.postEphemeral({ channel, user, text });
}

const NOT_LINKED =
  "Countersign does not know you: your Slack email is not the email of an active Countersign reviewer. Nothing was decided.";

/** The refusal a reviewer gets for a card they may not decide, or null for other errors. */
function refusal(error: unknown): string | null {
  if (error instanceof NotFoundError)
    return "You are not a reviewer of this card's queue in Countersign. Nothing was decided.";
  if (error instanceof ApiError) return error.message;
  return null;
}

export async function handleSlackInteraction(payload: SlackPayload): Promise<InteractionResult> {
  if (payload.type === "block_actions") return blockActions(BlockActions.parse(payload));
  if (payload.type === "view_submission") return viewSubmission(ViewSubmission.parse(payload));
  // other interactions (a closed modal, a shortcut) need no answer
  return { body: null, later: nothingLater };
}

async function blockActions(payload: z.infer<typeof BlockActions>): Promise<InteractionResult> {
  const action = payload.actions[0]!;
  const channel = payload.channel?.id ?? payload.container?.channel_id;
  // Open is a link button: Slack opens the URL itself, and still reports the click.
  if (action.action_id !== APPROVE_ACTION && action.action_id !== REJECT_ACTION)
    return { body: null, later: nothingLater };
  const card = CardRef.safeParse(safeJson(action.value));
  if (!card.success) throw new SlackInputError("The button carries no card.");

  const reviewer = await reviewerForSlackUser(payload.user.id);
  if (!reviewer) return { body: null, later: () => tell(channel, payload.user.id, NOT_LINKED) };

  if (action.action_id === APPROVE_ACTION) {
    const outcome = await decide(reviewer, card.data, "approve");
    return {
      body: null,
      later: async () => {
        if (outcome) await tell(channel, payload.user.id, outcome);
        await refreshMessages();
      },
    };
  }

  // Reject: the reason is asked in a modal, opened at once (its trigger expires in 3 s). The
  // reviewer's access is checked before: a non-member never sees the modal.
  try {
    await findBatchForReviewer(getDb(), reviewer, card.data.b);
  } catch (error) {
    const text = refusal(error);
    if (text === null) throw error;
    return { body: null, later: () => tell(channel, payload.user.id, text) };
  }
  const batch = await loadBatchView(getDb(), card.data.b);
  if (batch && batch.status !== "pending")
    return {
      body: null,
      later: () =>
        tell(
          channel,
          payload.user.id,
          `This card is already ${batch.status}. Nothing was decided.`,
        ),
    };
  if (!batch || !channel || !payload.trigger_id)
    return {
      body: null,
      later: () =>
        tell(channel, payload.user.id, "This card cannot be rejected from here: open it."),
    };
  try {
    await slackClient({ interactive: true }).views.open({
      trigger_id: payload.trigger_id,
      view: rejectModal(batch, JSON.stringify({ ...card.data, c: channel })),
    } as Parameters<ReturnType<typeof slackClient>["views"]["open"]>[0]);
  } catch (error) {
    // most often a trigger that expired (Slack was slow to deliver the click): a new click works
    console.error("Slack did not open the reject form:", error);
    return {
      body: null,
      later: () =>
        tell(channel, payload.user.id, "Slack could not open the form: click Reject again."),
    };
  }
  return { body: null, later: nothingLater };
}

async function viewSubmission(payload: z.infer<typeof ViewSubmission>): Promise<InteractionResult> {
  if (payload.view.callback_id !== REJECT_MODAL) return { body: null, later: nothingLater };
  const ref = ModalRef.safeParse(safeJson(payload.view.private_metadata));
  if (!ref.success) throw new SlackInputError("The modal carries no card.");
  const reason = payload.view.state.values[REASON_BLOCK]?.[REASON_INPUT]?.value?.trim() ?? "";
  if (!reason)
    return {
      body: {
        response_action: "errors",
        errors: { [REASON_BLOCK]: "Say why: the agent reads it." },
      },
      later: nothingLater,
    };
  const reviewer = await reviewerForSlackUser(payload.user.id);
  if (!reviewer) return { body: null, later: () => tell(ref.data.c, payload.user.id, NOT_LINKED) };
  const outcome = await decide(reviewer, ref.data, "reject", reason);
  return {
    body: null,
    later: async () => {
      if (outcome) await tell(ref.data.c, payload.user.id, outcome);
      await refreshMessages();
    },
  };
}

/**
 * The decision, through the same verb as the browser. Returns what to tell the Slack user when
 * it was not theirs to make (lost a race, not a member, a stale card), or null when it was made.
 */
async function decide(
  reviewer: ReviewerActor,
  card: z.infer<typeof CardRef>,
  outcome: "approve" | "reject",
  reason?: string,
): Promise<string | null> {
  try {
    await decideBatch(reviewer, card.b, { outcome, expectedRevisions: card.r, reason });
    return null;
  } catch (error) {
    const text = refusal(error);
    if (text === null) throw error;
    return text;
  }
}

function safeJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A signed payload that is not what our own messages send (400; nothing written). */
export class SlackInputError extends Error {}
