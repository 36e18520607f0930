import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { bringBack } from "@/lib/set-aside/bring-back";
import { setAside } from "@/lib/set-aside/set-aside";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await setAside(actor, params.batchId, body)),
);

export const DELETE = apiRoute<{ batchId: string }>(async ({ params, actor }) =>
  json(await bringBack(actor, params.batchId)),
);

export const { GET, HEAD, PUT, PATCH, OPTIONS } = refuseOtherMethods("POST", "DELETE");
