import { apiRoute, json } from "@/lib/http/api-route";
import { deleteView } from "@/lib/views/delete-view";

type Params = { viewId: string };

export const DELETE = apiRoute<Params>(async ({ params, actor }) =>
  json(await deleteView(actor, params.viewId)),
);
