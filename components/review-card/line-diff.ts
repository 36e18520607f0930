// A line diff for "what did this edit change": common prefix and suffix trimmed, then a longest
// common subsequence on the middle. Past a size budget the middle is shown as replaced wholesale,
// so a pasted megabyte cannot freeze the tab.

export type DiffLine = { kind: "same" | "added" | "removed"; text: string };

const MAX_CELLS = 1_000_000;

export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const same = (lines: string[]): DiffLine[] => lines.map((text) => ({ kind: "same", text }));
  return [
    ...same(a.slice(0, start)),
    ...diffMiddle(a.slice(start, endA), b.slice(start, endB)),
    ...same(a.slice(endA)),
  ];
}

function diffMiddle(a: string[], b: string[]): DiffLine[] {
  const removed = (text: string): DiffLine => ({ kind: "removed", text });
  const added = (text: string): DiffLine => ({ kind: "added", text });
  if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_CELLS) {
    return [...a.map(removed), ...b.map(added)];
  }
  // lcs[i][j] = length of the LCS of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: "same", text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
      out.push(removed(a[i++]!));
    } else {
      out.push(added(b[j++]!));
    }
  }
  return [...out, ...a.slice(i).map(removed), ...b.slice(j).map(added)];
}

export type DiffHunk = { kind: "lines"; lines: DiffLine[] } | { kind: "gap"; count: number };

/** Changed lines with `context` unchanged lines around them; longer unchanged runs fold to a gap. */
export function foldUnchanged(lines: DiffLine[], context = 2): DiffHunk[] {
  const keep = lines.map((line) => line.kind !== "same");
  const near = lines.map((_, index) =>
    keep.slice(Math.max(0, index - context), index + context + 1).some(Boolean),
  );
  const hunks: DiffHunk[] = [];
  lines.forEach((line, index) => {
    const last = hunks[hunks.length - 1];
    if (near[index]) {
      if (last?.kind === "lines") last.lines.push(line);
      else hunks.push({ kind: "lines", lines: [line] });
    } else if (last?.kind === "gap") {
      last.count++;
    } else {
      hunks.push({ kind: "gap", count: 1 });
    }
  });
  return hunks;
}

/** The JSON text both sides of an args diff are compared in. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}
