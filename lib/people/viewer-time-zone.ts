import { getDb } from "@/db/client";
import { personTimeZone } from "./my-settings";
import { resolveTimeZone, type ViewerTimeZone } from "@/lib/time/zone";

export { TIME_ZONE_COOKIE } from "@/lib/time/constants";

/** What the browser reported (the cookie's value as sent), for the client to tell if it is stale. */
export type ViewerTimeZoneWithReport = ViewerTimeZone & { browserReported: string | null };

/**
 * The zone a page shows its reviewer: their override, else the browser's zone from the cookie
 * (anyone can write a cookie: it is validated, and an unknown zone falls back to UTC), else UTC.
 * `cookieValue` is the cookie as the request sent it: this module stays free of Next.js.
 */
export async function viewerTimeZone(
  userId: string,
  cookieValue: string | undefined,
): Promise<ViewerTimeZoneWithReport> {
  const browserReported = cookieValue ? safeDecode(cookieValue) : null;
  const override = await personTimeZone(getDb(), userId);
  return { ...resolveTimeZone(override, browserReported), browserReported };
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
