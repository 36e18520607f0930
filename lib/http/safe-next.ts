// Where sign-in sends someone afterwards (`/sign-in?next=…`). Used by the server's redirect and by
// the sign-in form's `location.assign`, so both refuse the same addresses. Browsers read `/\host`,
// `/\t/host` and `//host` as another host: a sign-in link could otherwise bounce a freshly signed-in
// reviewer to a look-alike site (an open redirect).

/** Where sign-in goes when `next` is missing or refused. */
export const DEFAULT_NEXT_PATH = "/queue";

/** Backslashes, ASCII control characters and any whitespace, which no path of the app contains. */
const UNSAFE = /[\\\u0000-\u001f\u007f\s]/u;

/**
 * `next` as a path of `origin` (the app's public URL, or the page's own origin in the browser),
 * or the default page when it is not plainly one: it must start with one slash, contain no
 * backslash, control character or whitespace (raw or percent-encoded), and resolve to `origin`.
 */
export function safeNextPath(next: unknown, origin: string): string {
  if (typeof next !== "string" || !next.startsWith("/") || UNSAFE.test(next)) {
    return DEFAULT_NEXT_PATH;
  }
  // The path, decoded: an encoded `%5C` or `%09` is harmless to the URL parser here but not to
  // every browser and proxy on the way; `//` (raw or `/%2F`) names another host. The query may
  // hold an encoded space.
  let path: string;
  try {
    path = decodeURIComponent(next.split(/[?#]/, 1)[0]!);
  } catch {
    return DEFAULT_NEXT_PATH;
  }
  if (UNSAFE.test(path) || next.startsWith("//") || path.startsWith("//")) {
    return DEFAULT_NEXT_PATH;
  }
  let base: URL;
  let target: URL;
  try {
    base = new URL(origin);
    target = new URL(next, base);
  } catch {
    return DEFAULT_NEXT_PATH;
  }
  if (target.origin !== base.origin) return DEFAULT_NEXT_PATH;
  // Dot segments resolve away: `/.//host` and `/%2e%2e/%2fhost` become the path `//host`, which a
  // browser given it as a Location reads as another host. Check what is returned, not only `next`.
  const resolved = `${target.pathname}${target.search}${target.hash}`;
  if (resolved.startsWith("//") || resolved.startsWith("/\\")) return DEFAULT_NEXT_PATH;
  return resolved;
}
