"use client";

import { usePathname, useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";
import type { QueueFilters } from "./queue-cache";

const STATUSES = ["pending", "decided", "cancelled", "all"] as const;
const KINDS = ["action", "plan"] as const;

/** The queue's filters live in the URL, so a filtered view can be bookmarked and shared. */
export function useQueueFilters(): [QueueFilters, (change: Partial<QueueFilters>) => void] {
  const params = useSearchParams();
  const pathname = usePathname();

  const filters = useMemo<QueueFilters>(() => {
    const status = params.get("status");
    const kind = params.get("kind");
    return {
      queue: params.get("queue") || undefined,
      agent: params.get("agent") || undefined,
      tool: params.get("tool") || undefined,
      kind: KINDS.find((k) => k === kind),
      status: STATUSES.find((s) => s === status) ?? "pending",
    };
  }, [params]);

  const setFilters = useCallback(
    (change: Partial<QueueFilters>) => {
      // Start from the address bar, not from the last render's params: a second change made
      // before React re-renders would otherwise be applied to the old query and drop the first.
      const next = new URLSearchParams(window.location.search);
      for (const [key, value] of Object.entries(change)) {
        if (value === undefined || value === "" || (key === "status" && value === "pending")) {
          next.delete(key);
        } else {
          next.set(key, String(value));
        }
      }
      const query = next.toString();
      // The native replaceState, which Next keeps useSearchParams in step with, updates the
      // address at once; router.replace would also refetch the page from the server, which renders
      // nothing from the query (the queue filters its cards on the client).
      window.history.replaceState(null, "", query ? `${pathname}?${query}` : pathname);
    },
    [pathname],
  );

  return [filters, setFilters];
}
