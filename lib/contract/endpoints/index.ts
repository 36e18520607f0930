import type { Endpoint } from "../endpoint";
import { batchEndpoints } from "./batches";
import { historyEndpoints } from "./history";
import { meEndpoints } from "./me";
import { notificationEndpoints } from "./notifications";
import { policyEndpoints } from "./policies";
import { queueEndpoints } from "./queues";
import { reviewEndpoints } from "./reviews";
import { routingEndpoints } from "./routing";
import { runEndpoints } from "./runs";
import { streamEndpoints } from "./streams";
import { viewEndpoints } from "./views";

// Every endpoint of the contract, grouped per resource: a file per tag of the OpenAPI document,
// listed in the document's order of tags.

export const ENDPOINTS: readonly Endpoint[] = [
  ...runEndpoints,
  ...batchEndpoints,
  ...reviewEndpoints,
  ...historyEndpoints,
  ...streamEndpoints,
  ...queueEndpoints,
  ...routingEndpoints,
  ...policyEndpoints,
  ...viewEndpoints,
  ...notificationEndpoints,
  ...meEndpoints,
];
