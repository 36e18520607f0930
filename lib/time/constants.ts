// The time settings' names, without dependencies: browser code imports them too.

export const DEFAULT_TIME_ZONE = "UTC";
/** The browser's zone, written by the boot script before the first paint and on every load. */
export const TIME_ZONE_COOKIE = "countersign-tz";
/**
 * The locale every time and cost in the app is written in: the UI's own language. en-US writes
 * "$12.50" and "¥1,235" (en-GB would write "US$" and "JP¥") and names US zones ("EST").
 */
export const APP_LOCALE = "en-US";

/** Where the zone a page is shown in came from (the client follows the browser unless "person"). */
export type TimeZoneSource = "person" | "browser" | "default";
