"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";
import type { QueueFilters } from "./queue-cache";

const STATUSES = ["pending", "decided", "cancelled", "all"] as const;
const KINDS = ["action", "plan"] as const;

/** The queue's filters live in the URL, so a filtered view can be bookmarked and shared. */
export function useQueueFilters(): [QueueFilters, (change: Partial<QueueFilters>) => void] {
  const params = useSearchParams();
  const router = useRouter();
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
      const next = new URLSearchParams(params.toString());
      for (const [key, value] of Object.entries(change)) {
        if (value === undefined || value === "" || (key === "status" && value === "pending")) {
          next.delete(key);
        } else {
          next.set(key, String(value));
        }
      }
      const query = next.toString();
      router.replace(query ? `${pathname}?${query}` : pathname, { scroll: false });
    },
    [params, pathname, router],
  );

  return [filters, setFilters];
}
