"use client";

import { useCallback, useEffect, useState } from "react";

/**
 * Cards that arrived while the reviewer was looking elsewhere, counted in the tab title until
 * they come back to the tab.
 */
export function useUnreadTitle(base: string): (ids: string[]) => void {
  const [unread, setUnread] = useState(0);
  useEffect(() => {
    document.title = unread > 0 ? `(${unread}) ${base}` : base;
  }, [unread, base]);
  useEffect(() => {
    const seen = () => {
      if (document.visibilityState === "visible" && document.hasFocus()) setUnread(0);
    };
    window.addEventListener("focus", seen);
    document.addEventListener("visibilitychange", seen);
    return () => {
      window.removeEventListener("focus", seen);
      document.removeEventListener("visibilitychange", seen);
    };
  }, []);
  return useCallback((ids: string[]) => {
    if (document.visibilityState === "visible" && document.hasFocus()) return;
    setUnread((n) => n + ids.length);
  }, []);
}
