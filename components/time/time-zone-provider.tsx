"use client";

import { useRouter } from "next/navigation";
import { createContext, useContext, useEffect, useMemo, type ReactNode } from "react";
import { APP_LOCALE, type TimeZoneSource } from "@/lib/time/constants";

export type ViewerTimeFormat = { timeZone: string; locale: string; source: TimeZoneSource };

const ViewerTimeFormatContext = createContext<ViewerTimeFormat>({
  timeZone: "UTC",
  locale: APP_LOCALE,
  source: "default",
});

/** The zone and locale every time on the page is written in: the server's choice, as rendered. */
export function useViewerTimeFormat(): ViewerTimeFormat {
  return useContext(ViewerTimeFormatContext);
}

let refreshedForZone = false;

/**
 * Hands the server's zone to every client component, so both render the same text (no hydration
 * mismatch). The browser's zone reaches the server in a cookie the root layout's boot script
 * writes before the first paint; on a first visit (or after travelling) the page was rendered
 * before the server had it, so it is rendered again once, in the browser's zone. Not when the
 * person chose a zone of their own, and not twice: a zone the server refused stays refused.
 */
export function TimeZoneProvider(props: {
  timeZone: string;
  source: TimeZoneSource;
  /** the cookie's value the server saw, null if none */
  browserReported: string | null;
  children: ReactNode;
}) {
  const router = useRouter();
  const { timeZone, source, browserReported } = props;
  useEffect(() => {
    if (source === "person" || refreshedForZone) return;
    const browser = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (browser && browser !== browserReported) {
      refreshedForZone = true;
      router.refresh();
    }
  }, [router, source, browserReported]);
  const value = useMemo(() => ({ timeZone, locale: APP_LOCALE, source }), [timeZone, source]);
  return <ViewerTimeFormatContext value={value}>{props.children}</ViewerTimeFormatContext>;
}
