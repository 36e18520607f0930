import type { Endpoint } from "../endpoint";
import { accessEndpoints } from "./access";
import { agentEndpoints } from "./agents";
import { auditEndpoints } from "./audit";
import { batchEndpoints } from "./batches";
import { historyEndpoints } from "./history";
import { insightEndpoints } from "./insights";
import { mcpGatewayEndpoints } from "./mcp-gateways";
import { meEndpoints } from "./me";
import { notificationEndpoints } from "./notifications";
import { peopleEndpoints } from "./people";
import { policyEndpoints } from "./policies";
import { queueEndpoints } from "./queues";
import { reviewEndpoints } from "./reviews";
import { routingEndpoints } from "./routing";
import { runEndpoints } from "./runs";
import { ssoEndpoints } from "./sso";
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
  ...agentEndpoints,
  ...accessEndpoints,
  ...peopleEndpoints,
  ...auditEndpoints,
  ...insightEndpoints,
  ...viewEndpoints,
  ...notificationEndpoints,
  ...ssoEndpoints,
  ...meEndpoints,
  ...mcpGatewayEndpoints,
];
