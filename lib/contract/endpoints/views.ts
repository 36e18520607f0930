import { SaveViewInput, saveView } from "@/lib/views/save-view";
import { json } from "@/lib/http/api-route";
import { listViews } from "@/lib/views/list-views";
import { deleteView } from "@/lib/views/delete-view";
import { defineEndpoint } from "../endpoint";

export const viewEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/views",
    auth: "reviewer",
    operationId: "listViews",
    tag: "Views",
    summary: "The saved views of the reviewer's open queues, by queue then name",
    ok: { status: 200, schema: "SavedViewList" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await listViews(actor)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/views",
    auth: "reviewer",
    operationId: "saveView",
    tag: "Views",
    summary: "Save a named filter in one of the reviewer's queues, shared with its members",
    description:
      "Any member may save. A name already used in that queue is 409 already_exists; a queue the caller is not in is 404; an archived queue is 409 queue_archived. Writes a view.saved event.",
    body: SaveViewInput,
    ok: { status: 201, schema: "SavedView" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ body, actor }) => json(await saveView(actor, body), 201),
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/views/{viewId}",
    auth: "reviewer",
    operationId: "deleteView",
    tag: "Views",
    summary: "Delete a saved view (whoever saved it, or a lead or admin of its queue)",
    description: "Answers the view as it was. Writes a view.deleted event.",
    ok: { status: 200, schema: "SavedView" },
    errors: [401, 403, 404],
    handler: async ({ params, actor }) => json(await deleteView(actor, params.viewId)),
  }),
];
