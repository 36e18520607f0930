"use client";

import { useEffect, useState, useSyncExternalStore } from "react";

// One shared one-second ticker for every card on the page, instead of a timer per countdown.

const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribeTicking(listener: () => void) {
  listeners.add(listener);
  timer ??= setInterval(() => listeners.forEach((notify) => notify()), 1000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const subscribeStill = () => () => {};

/**
 * The current time from `now`, rounded down to the second (so the snapshot is stable between
 * ticks). Re-renders every second while `live`; otherwise it only reads the clock when rendered.
 */
export function useClock(now: () => number, live: boolean): number {
  const read = () => Math.floor(now() / 1000) * 1000;
  return useSyncExternalStore(live ? subscribeTicking : subscribeStill, read, read);
}

/**
 * Whole seconds left before `end`, rounded up: a deadline 30 minutes away reads 30:00 until a full
 * second has gone, then 29:59 (never 30:01), and 0:01 until the very end. Computed from the real
 * clock, not the one rounded down to the second, whose up-to-999 ms lag added a second.
 */
export function secondsLeft(end: number, nowMs: number): number {
  return Math.max(0, Math.ceil((end - nowMs) / 1000));
}

/** {@link secondsLeft}, re-rendered while `live`; the snapshot only changes at a deadline's second. */
export function useSecondsLeft(end: number, now: () => number, live: boolean): number {
  const read = () => secondsLeft(end, now());
  return useSyncExternalStore(live ? subscribeTicking : subscribeStill, read, read);
}

// setTimeout overflows past 2^31-1 ms (~24.8 days); deadlines can be 30 days out.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Whether a pending batch's deadline has passed: controls go away then, the server would refuse. */
export function useDeadlinePassed(expiresAt: string, now: () => number, active: boolean): boolean {
  const end = Date.parse(expiresAt);
  const [passedFor, setPassedFor] = useState<string | null>(null);
  const renderedAt = useClock(now, false);
  useEffect(() => {
    if (!active || Number.isNaN(end)) return;
    const wait = end - now();
    if (wait > MAX_TIMER_MS) return;
    const timer = setTimeout(() => setPassedFor(expiresAt), Math.max(0, wait));
    return () => clearTimeout(timer);
  }, [active, end, expiresAt, now]);
  return active && !Number.isNaN(end) && (passedFor === expiresAt || renderedAt >= end);
}
