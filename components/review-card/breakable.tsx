import { Fragment, type ReactNode } from "react";

// A tool name such as `create_database_role_with_grants` has no space to wrap at, so on a narrow
// card the browser used to cut it anywhere ("create_datab|ase_role"). Offering a break after each
// separator and before each inner capital lets it wrap between its words instead.
const BREAK_AFTER = /([_./:-])(?=.)/g;
const BREAK_BEFORE_CAPITAL = /([a-z0-9])(?=[A-Z])/g;
// Ordinary words stay whole: only long, identifier-like runs get break points.
const LONG_RUN = /\S{13,}/g;

/** The text with `<wbr>` between the words of every long identifier in it. */
export function breakable(text: string): ReactNode {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    parts.push(text.slice(last, match.index));
    const marked = match[0]
      .replace(BREAK_AFTER, "$1\u0000")
      .replace(BREAK_BEFORE_CAPITAL, "$1\u0000");
    marked.split("\u0000").forEach((word, i) => {
      parts.push(
        <Fragment key={`${match.index}-${i}`}>
          {i > 0 && <wbr />}
          {word}
        </Fragment>,
      );
    });
    last = match.index + match[0].length;
  }
  if (last === 0) return text;
  parts.push(text.slice(last));
  return parts;
}
