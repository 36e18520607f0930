// JSON.parse decides what is valid; its messages carry no position in V8 ("Unexpected token '}',
// ... is not valid JSON"), so on failure a small strict scanner finds where and why.

export type JsonParseResult =
  | { ok: true; value: unknown }
  | { ok: false; message: string; line: number; column: number; offset: number };

class JsonSyntaxError {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

export function parseJsonText(text: string): JsonParseResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const found = locateError(text);
    const offset = found?.offset ?? 0;
    const reason = found?.reason ?? (error instanceof Error ? error.message : "Invalid JSON");
    const before = text.slice(0, offset);
    const line = before.split("\n").length;
    const column = offset - before.lastIndexOf("\n");
    return {
      ok: false,
      message: `${reason} at line ${line}, column ${column}`,
      line,
      column,
      offset,
    };
  }
}

function locateError(text: string): JsonSyntaxError | null {
  let i = 0;
  const fail = (reason: string, at = i): never => {
    throw new JsonSyntaxError(at, reason);
  };
  const describe = (ch: string | undefined) =>
    ch === undefined ? "end of input" : `"${ch === "\n" ? "\\n" : ch}"`;
  const skipSpace = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };

  const value = (): void => {
    skipSpace();
    const ch = text[i];
    if (ch === "{") return object();
    if (ch === "[") return array();
    if (ch === '"') return string();
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return number();
    for (const word of ["true", "false", "null"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    if (ch === undefined) fail("Unexpected end of input: expected a value");
    if (ch === "'") fail("Strings must use double quotes");
    fail(`Unexpected ${describe(ch)}: expected a value`);
  };

  const object = () => {
    i++;
    skipSpace();
    if (text[i] === "}") return void i++;
    for (;;) {
      skipSpace();
      if (text[i] !== '"')
        fail(`Expected a property name in double quotes, found ${describe(text[i])}`);
      string();
      skipSpace();
      if (text[i] !== ":") fail(`Expected ":" after the property name, found ${describe(text[i])}`);
      i++;
      value();
      skipSpace();
      if (text[i] === "}") return void i++;
      if (text[i] !== ",") fail(`Expected "," or "}", found ${describe(text[i])}`);
      const comma = i++;
      skipSpace();
      if (text[i] === "}") fail("Trailing comma is not allowed", comma);
    }
  };

  const array = () => {
    i++;
    skipSpace();
    if (text[i] === "]") return void i++;
    for (;;) {
      value();
      skipSpace();
      if (text[i] === "]") return void i++;
      if (text[i] !== ",") fail(`Expected "," or "]", found ${describe(text[i])}`);
      const comma = i++;
      skipSpace();
      if (text[i] === "]") fail("Trailing comma is not allowed", comma);
    }
  };

  const string = () => {
    const start = i++;
    for (;;) {
      const ch = text[i];
      if (ch === undefined) fail("Unterminated string", start);
      if (ch === '"') return void i++;
      if (ch === "\\") {
        const escape = text[i + 1];
        if (escape === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail("Invalid \\u escape");
          i += 6;
        } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) {
          i += 2;
        } else {
          fail(`Invalid escape "\\${escape ?? ""}"`);
        }
      } else if (ch! < " ") {
        fail("Line breaks and control characters in strings must be escaped (\\n)");
      } else {
        i++;
      }
    }
  };

  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === "-") fail("Invalid number");
    i += match![0].length;
  };

  try {
    value();
    skipSpace();
    if (i < text.length) fail(`Unexpected ${describe(text[i])} after the JSON value`);
    return null;
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
}
