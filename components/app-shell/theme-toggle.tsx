"use client";

import { useSyncExternalStore } from "react";
import { THEME_STORAGE_KEY } from "./theme";

type Theme = "system" | "light" | "dark";

/**
 * The theme after this one. From "system" it goes to the theme the system does not show, so the
 * first click always changes what is seen (a light system going "system → light" changed nothing);
 * then to the other one, then back to following the system.
 */
function nextTheme(theme: Theme, systemDark: boolean): Theme {
  const unlike: Theme = systemDark ? "light" : "dark";
  const like: Theme = systemDark ? "dark" : "light";
  return theme === "system" ? unlike : theme === unlike ? like : "system";
}
const listeners = new Set<() => void>();

function readTheme(): Theme {
  const stored = localStorage.getItem(THEME_STORAGE_KEY);
  return stored === "light" || stored === "dark" ? stored : "system";
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const DARK_QUERY = "(prefers-color-scheme: dark)";
const prefersDark = () => window.matchMedia(DARK_QUERY).matches;
function subscribeScheme(listener: () => void) {
  const query = window.matchMedia(DARK_QUERY);
  query.addEventListener("change", listener);
  return () => query.removeEventListener("change", listener);
}

function applyTheme(theme: Theme) {
  if (theme === "system") {
    localStorage.removeItem(THEME_STORAGE_KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(THEME_STORAGE_KEY, theme);
    document.documentElement.dataset.theme = theme;
  }
  for (const listener of listeners) listener();
}

export function ThemeToggle() {
  // The server cannot know the saved theme; it renders "system" and the client corrects it.
  const theme = useSyncExternalStore(subscribe, readTheme, () => "system" as Theme);
  // Read like the theme: "system" light on the server, the real answer once hydrated.
  const systemDark = useSyncExternalStore(subscribeScheme, prefersDark, () => false);
  const next = nextTheme(theme, systemDark);
  return (
    <button
      type="button"
      className="shell-button"
      onClick={() => applyTheme(next)}
      aria-label={`Theme: ${theme}. Switch to ${next}.`}
      title={`Theme: ${theme}`}
    >
      {theme === "dark" ? "☾" : theme === "light" ? "☀" : "◐"}
    </button>
  );
}
