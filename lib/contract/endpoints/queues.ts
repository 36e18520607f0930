import { CreateQueueInput, createQueue } from "@/lib/queues/create-queue";
import { json } from "@/lib/http/api-route";
import { listQueues } from "@/lib/queues/list-queues";
import { UpdateQueueInput, updateQueue } from "@/lib/queues/update-queue";
import { getQueue, listMembers } from "@/lib/queues/get-queue";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { AddMemberInput, addMember } from "@/lib/queues/add-member";
import { ChangeRoleInput, changeRole } from "@/lib/queues/change-role";
import { removeMember } from "@/lib/queues/remove-member";
import { defineEndpoint } from "../endpoint";

export const queueEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/queues",
    auth: "reviewer",
    operationId: "listQueues",
    tag: "Queues",
    summary:
      "The reviewer's queues with their role, settings and member count (an admin sees every queue; archived ones have archivedAt)",
    ok: { status: 200, schema: "QueueList" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await listQueues(actor)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/queues",
    auth: "reviewer",
    operationId: "createQueue",
    tag: "Queues",
    summary: "Create a queue (admins); the creator becomes its first admin member",
    body: CreateQueueInput,
    ok: { status: 201, schema: "QueueDetail" },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ body, actor }) => json(await createQueue(actor, body), 201),
  }),
  defineEndpoint({
    method: "GET",
    path: "/queues/{queueId}",
    auth: "reviewer",
    operationId: "getQueue",
    tag: "Queues",
    summary: "A queue's settings and members (its members and admins)",
    ok: { status: 200, schema: "QueueDetail" },
    errors: [401, 403, 404],
    handler: async ({ params, actor }) => json(await getQueue(actor, params.queueId)),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/queues/{queueId}",
    auth: "reviewer",
    operationId: "updateQueue",
    tag: "Queues",
    summary: "Change a queue's settings (its leads and admins)",
    description:
      "Only the fields sent change. escalationQueueId must be another open queue the caller can see (null: no escalation). An archived queue is 409 queue_archived; a name in use is 409 already_exists. slackChannelId (a Slack channel id such as C0123ABCD, null: none) makes the queue post its new cards there with Approve / Reject / Open buttons, once the installation has SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (lib/slack/README.md). Writes a queue.updated event listing each change before and after.",
    body: UpdateQueueInput,
    ok: { status: 200, schema: "QueueDetail" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ params, body, actor }) =>
      json(await updateQueue(actor, params.queueId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/queues/{queueId}/archive",
    auth: "reviewer",
    operationId: "archiveQueue",
    tag: "Queues",
    summary: "Archive a queue (admins): it keeps its history and takes no changes",
    description: "Open queues that escalated to it stop escalating (a queue.updated event each).",
    ok: { status: 200, schema: "QueueDetail" },
    errors: [401, 403, 404, 409],
    handler: async ({ params, actor }) => json(await archiveQueue(actor, params.queueId)),
  }),
  defineEndpoint({
    method: "GET",
    path: "/queues/{queueId}/members",
    auth: "reviewer",
    operationId: "listMembers",
    tag: "Queues",
    summary: "A queue's members with their roles",
    ok: { status: 200, schema: "QueueMemberList" },
    errors: [401, 403, 404],
    handler: async ({ params, actor }) => json(await listMembers(actor, params.queueId)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/queues/{queueId}/members",
    auth: "reviewer",
    operationId: "addMember",
    tag: "Queues",
    summary: "Add an existing reviewer by email (leads: reviewer or lead; admins: any role)",
    body: AddMemberInput,
    ok: { status: 201, schema: "QueueMember" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ params, body, actor }) =>
      json(await addMember(actor, params.queueId, body), 201),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/queues/{queueId}/members/{userId}",
    auth: "reviewer",
    operationId: "changeMemberRole",
    tag: "Queues",
    summary: "Change a member's role",
    description:
      "Leads may not touch admins or grant admin. Taking the admin role from the installation's last admin is 409 last_admin.",
    body: ChangeRoleInput,
    ok: { status: 200, schema: "QueueMember" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ params, body, actor }) =>
      json(await changeRole(actor, params.queueId, params.userId, body)),
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/queues/{queueId}/members/{userId}",
    auth: "reviewer",
    operationId: "removeMember",
    tag: "Queues",
    summary: "Remove a member; answers the membership as it was",
    description:
      "Leads may not remove admins; removing the installation's last admin is 409 last_admin.",
    ok: { status: 200, schema: "QueueMember" },
    errors: [401, 403, 404, 409],
    handler: async ({ params, actor }) =>
      json(await removeMember(actor, params.queueId, params.userId)),
  }),
];
