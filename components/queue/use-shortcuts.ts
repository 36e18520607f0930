"use client";

import { useEffect, useRef } from "react";

export type ShortcutHandlers = Partial<
  Record<"j" | "k" | "a" | "r" | "e" | "s" | "z" | "?", () => void>
>;

/**
 * Single-key shortcuts that stay out of the way while the reviewer types (reasons, edits). With
 * `enabled` false (the person's setting, WCAG 2.1.4) no key does anything: the buttons remain.
 */
export function useShortcuts(handlers: ShortcutHandlers, enabled = true): void {
  const ref = useRef(handlers);
  useEffect(() => {
    ref.current = handlers;
  });
  useEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target as HTMLElement | null;
      if (
        target &&
        (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
      ) {
        return;
      }
      if (document.querySelector("dialog[open]") && event.key !== "?") return;
      const handler = ref.current[event.key as keyof ShortcutHandlers];
      if (!handler) return;
      event.preventDefault();
      handler();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [enabled]);
}
