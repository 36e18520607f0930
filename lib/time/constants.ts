// The time settings' names, without dependencies: browser code imports them too.

export const DEFAULT_TIME_ZONE = "UTC";
/** The browser's zone, written by the boot script before the first paint and on every load. */
export const TIME_ZONE_COOKIE = "countersign-tz";
/** The locale every time in the app is written in: the UI's own language. */
export const APP_LOCALE = "en-GB";

/** Where the zone a page is shown in came from (the client follows the browser unless "person"). */
export type TimeZoneSource = "person" | "browser" | "default";
