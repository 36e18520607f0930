"use client";

import { useQueryClient } from "@tanstack/react-query";
import {
  useCallback,
  useEffect,
  useRef,
  useState,
  useSyncExternalStore,
  type RefObject,
} from "react";
import type { Batch } from "@/components/review-card/types";
import { QUEUE_KEY, type QueueCache } from "./queue-cache";

// Opt-in browser notifications for cards that arrive while the reviewer looks elsewhere. The
// choice is the browser's (localStorage), not the account's: each device asks its own permission.

const STORAGE_KEY = "countersign.notify";
/** more arrivals than this within BURST_MS become one "N new cards" notification */
const BURST_LIMIT = 3;
const BURST_MS = 2000;
/** arrivals this close together are one burst (a stream delivers a burst as several reads) */
const GATHER_MS = 300;

export type NotifyPermission = NotificationPermission | "unsupported";

export type Notifications = {
  /** the reviewer asked for notifications (and the browser allows them) */
  enabled: boolean;
  permission: NotifyPermission;
  setEnabled: (on: boolean) => Promise<void>;
  /** call with the ids of the batches that arrived */
  notify: (ids: string[]) => void;
};

const listeners = new Set<() => void>();
function subscribe(listener: () => void) {
  listeners.add(listener);
  window.addEventListener("storage", listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", listener);
  };
}
const readStored = () => window.localStorage.getItem(STORAGE_KEY) === "on";
function writeStored(on: boolean) {
  if (on) window.localStorage.setItem(STORAGE_KEY, "on");
  else window.localStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

const currentPermission = (): NotifyPermission =>
  typeof Notification === "undefined" ? "unsupported" : Notification.permission;

const lookingElsewhere = () => document.visibilityState !== "visible" || !document.hasFocus();

/**
 * `onOpen.current(batchId)` runs when the reviewer clicks a card's notification (after the tab is
 * focused). A ref: the screen can only select a card once its list exists, after this hook runs.
 */
export function useNotifications(onOpen: RefObject<(batchId: string) => void>): Notifications {
  const client = useQueryClient();
  const wanted = useSyncExternalStore(subscribe, readStored, () => false);
  // Read on the client only: the server render has no Notification.
  const [permission, setPermission] = useState<NotifyPermission>("default");
  useEffect(() => {
    const sync = () => setPermission(currentPermission());
    sync();
    // The reviewer may change the site's permission in the browser's settings meanwhile.
    document.addEventListener("visibilitychange", sync);
    return () => document.removeEventListener("visibilitychange", sync);
  }, []);
  const enabled = wanted && permission === "granted";

  const setEnabled = useCallback(async (on: boolean) => {
    if (!on || typeof Notification === "undefined") {
      writeStored(false);
      return;
    }
    const answer =
      Notification.permission === "default"
        ? await Notification.requestPermission()
        : Notification.permission;
    setPermission(answer);
    writeStored(answer === "granted");
  }, []);

  const enabledRef = useRef(enabled);
  useEffect(() => {
    enabledRef.current = enabled;
  }, [enabled]);

  const gathered = useRef<Batch[]>([]);
  const recent = useRef<number[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const flush = useCallback(() => {
    timer.current = null;
    const arrived = gathered.current;
    gathered.current = [];
    if (arrived.length === 0 || !enabledRef.current) return;
    const now = Date.now();
    recent.current = recent.current.filter((at) => now - at < BURST_MS);
    const burst = recent.current.length + arrived.length > BURST_LIMIT;
    recent.current.push(...arrived.map(() => now));
    if (burst) {
      const queues = [...new Set(arrived.map((b) => b.queue.name))].join(", ");
      // One tag: a later burst replaces this notification instead of stacking another.
      show(`${arrived.length} new cards`, { body: `queue ${queues}`, tag: "countersign-burst" });
      return;
    }
    for (const batch of arrived) {
      show(arrivalTitle(batch), { body: batch.calls[0]?.summary ?? "", tag: batch.id }, () =>
        onOpen.current(batch.id),
      );
    }
  }, [onOpen]);

  const notify = useCallback(
    (ids: string[]) => {
      if (!enabledRef.current || !lookingElsewhere()) return;
      const cache = client.getQueryData<QueueCache>(QUEUE_KEY);
      for (const id of ids) {
        const batch = cache?.byId.get(id);
        if (batch && batch.status === "pending") gathered.current.push(batch);
      }
      timer.current ??= setTimeout(flush, GATHER_MS);
    },
    [client, flush],
  );

  return { enabled, permission, setEnabled, notify };
}

/** "Support bot asks: refund_order — queue General" */
export function arrivalTitle(batch: Batch): string {
  const tools = [...new Set(batch.calls.map((c) => c.toolName))];
  const asks =
    tools.length === 0
      ? "a plan"
      : tools.slice(0, 2).join(", ") + (tools.length > 2 ? ` +${tools.length - 2}` : "");
  return `${batch.agent.name} asks: ${asks} — queue ${batch.queue.name}`;
}

function show(title: string, options: NotificationOptions, onClick?: () => void) {
  try {
    const notification = new Notification(title, options);
    notification.onclick = () => {
      window.focus();
      onClick?.();
      notification.close();
    };
  } catch {
    // Some browsers (Android Chrome) only notify from a service worker: the tab title still counts.
  }
}
