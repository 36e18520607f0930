import type { Endpoint } from "../endpoint";
import { meEndpoints } from "./me";
import { notificationEndpoints } from "./notifications";
import { viewEndpoints } from "./views";

// Every endpoint of the contract, grouped per resource (a file per tag of the OpenAPI document).

export const ENDPOINTS: readonly Endpoint[] = [
  ...viewEndpoints,
  ...meEndpoints,
  ...notificationEndpoints,
];
