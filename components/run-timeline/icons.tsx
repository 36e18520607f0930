import type { ReactElement } from "react";

// Small stroke icons for the timeline, drawn on a 16×16 grid. Decorative: always aria-hidden.

export type IconName =
  | "start"
  | "pause"
  | "check"
  | "cross"
  | "edit"
  | "vote"
  | "clock"
  | "ban"
  | "claim"
  | "tool"
  | "alert"
  | "flag"
  | "rollback"
  | "escalate"
  | "dot";

const PATHS: Record<IconName, ReactElement> = {
  start: <path d="M5.5 3.5v9l7-4.5z" />,
  pause: <path d="M5.5 3.5v9M10.5 3.5v9" />,
  check: <path d="M3.5 8.5l3 3 6-7" />,
  cross: <path d="M4.5 4.5l7 7M11.5 4.5l-7 7" />,
  edit: <path d="M10.5 3l2.5 2.5L6 12.5l-3.2.7.7-3.2z" />,
  vote: (
    <>
      <circle cx="8" cy="8" r="5.5" />
      <path d="M5.8 8.2l1.6 1.6 3-3.3" />
    </>
  ),
  clock: (
    <>
      <circle cx="8" cy="8" r="5.5" />
      <path d="M8 5v3.2l2 1.3" />
    </>
  ),
  ban: (
    <>
      <circle cx="8" cy="8" r="5.5" />
      <path d="M4.2 11.8l7.6-7.6" />
    </>
  ),
  claim: (
    <>
      <circle cx="8" cy="8" r="5.5" />
      <path d="M6.8 5.6L9.4 8l-2.6 2.4" />
    </>
  ),
  tool: <path d="M3 4.5l3 3-3 3M8 11.5h5" />,
  alert: <path d="M8 2.8l5.6 10H2.4zM8 6.8v2.6M8 11.2v.1" />,
  flag: <path d="M4 13.5V2.8h8l-1.8 3 1.8 3H4" />,
  rollback: <path d="M3.2 6.5A5 5 0 1 1 3.5 10M3 3v3.5h3.5" />,
  escalate: <path d="M8 13V3.5M4 7.5l4-4 4 4" />,
  dot: <circle cx="8" cy="8" r="2" fill="currentColor" />,
};

export function Icon({ name }: { name: IconName }) {
  return (
    <svg
      width="14"
      height="14"
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.7"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {PATHS[name]}
    </svg>
  );
}
