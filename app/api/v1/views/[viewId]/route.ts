import { apiRoute, json } from "@/lib/http/api-route";
import { deleteView } from "@/lib/views/delete-view";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

type Params = { viewId: string };

export const DELETE = apiRoute<Params>(async ({ params, actor }) =>
  json(await deleteView(actor, params.viewId)),
);

export const { GET, HEAD, POST, PUT, PATCH, OPTIONS } = refuseOtherMethods("DELETE");
