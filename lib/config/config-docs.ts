import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "prettier";
import { SETTINGS, type SettingName } from "./settings";

// `npm run config:docs` writes `.env.example` and lib/config/README.md's settings table from the
// settings table (lib/config/settings.ts); test/config/config.test.ts checks both are current.

export const README_BEGIN = "<!-- settings:begin (npm run config:docs writes this table) -->";
export const README_END = "<!-- settings:end -->";

const names = () => Object.keys(SETTINGS) as SettingName[];

function wrap(text: string, width = 96): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** The default as a value one could write after `NAME=` (empty when it is not a literal). */
function literalDefault(shown: string): string {
  const literal = /^`([^`]*)`$/.exec(shown.replace(/\s*\(.*\)$/, ""));
  return literal && !literal[1]!.includes("$") ? literal[1]! : "";
}

export function envExample(): string {
  const head = [
    "# Countersign's settings, each with its default. Copy this file to .env and uncomment what you",
    "# change: `npm start`, `npm run admin`, `npm run demo` and `npm run db:migrate` all read .env (and",
    "# .env.local, .env.production, .env.production.local) the same way; variables already set in the",
    "# environment win. A bad value stops `npm start` with a message naming it.",
    "# Generated from lib/config/settings.ts by `npm run config:docs`: edit there, not here.",
    "",
  ];
  const body = names().flatMap((name) => {
    const setting = SETTINGS[name] as (typeof SETTINGS)[SettingName] & {
      scope?: string;
      secret?: boolean;
    };
    const description = `${setting.scope === "demo" ? "(npm run demo) " : ""}${setting.description.replaceAll("`", "")}`;
    const shown = setting.shown === "—" ? "unset" : setting.shown.replaceAll("`", "");
    return [
      ...wrap(description).map((line) => `# ${line}`),
      `# Default: ${shown}.${setting.secret ? " A secret: keep .env out of version control." : ""}`,
      `#${name}=${setting.secret ? "" : literalDefault(setting.shown)}`,
      "",
    ];
  });
  return [...head, ...body].join("\n");
}

function escapeCell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** The settings table of lib/config/README.md, as prettier formats it. */
export async function readmeTable(): Promise<string> {
  const rows = names().map((name) => {
    const setting = SETTINGS[name] as (typeof SETTINGS)[SettingName] & { scope?: string };
    const meaning = `${setting.scope === "demo" ? "`npm run demo`: " : ""}${setting.description}`;
    return `| \`${name}\` | ${escapeCell(setting.shown)} | ${escapeCell(meaning)} |`;
  });
  const table = ["| variable | default | meaning |", "| --- | --- | --- |", ...rows].join("\n");
  return (await format(table, { parser: "markdown", printWidth: 100 })).trimEnd();
}

/** `readme` with its settings table replaced by the current one. */
export async function withCurrentTable(readme: string): Promise<string> {
  const begin = readme.indexOf(README_BEGIN);
  const end = readme.indexOf(README_END);
  if (begin < 0 || end < begin)
    throw new Error(`lib/config/README.md lacks the ${README_BEGIN} … ${README_END} markers.`);
  return `${readme.slice(0, begin + README_BEGIN.length)}\n\n${await readmeTable()}\n\n${readme.slice(end)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = process.cwd();
  writeFileSync(join(root, ".env.example"), envExample());
  const readme = join(root, "lib", "config", "README.md");
  writeFileSync(readme, await withCurrentTable(readFileSync(readme, "utf8")));
  console.log("Wrote .env.example and the settings table of lib/config/README.md.");
}
