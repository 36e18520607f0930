import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// drizzle's migrator applies a migration only when its journal `when` is later than the last
// applied one's (not by tag): a migration made on a branch and merged after a later-stamped one
// would be skipped on every database that already has the later one. Migrations made in
// parallel are merged in tag order and their `when`s put in that order.

const MIGRATIONS = join(process.cwd(), "db/migrations");
type Entry = { idx: number; tag: string; when: number };
const journal = JSON.parse(readFileSync(join(MIGRATIONS, "meta/_journal.json"), "utf8")) as {
  entries: Entry[];
};

describe("the migration journal", () => {
  it("lists the migrations in tag order, each stamped after the one before", () => {
    const late = journal.entries.filter(
      (entry, i) => i > 0 && entry.when <= journal.entries[i - 1]!.when,
    );
    expect(late.map((entry) => entry.tag)).toEqual([]);
    const tags = journal.entries.map((entry) => entry.tag);
    expect(tags).toEqual([...tags].sort());
    expect(journal.entries.map((entry) => entry.idx)).toEqual(tags.map((_, i) => i));
  });

  it("names only migrations whose SQL and snapshot are there", () => {
    for (const { tag } of journal.entries) {
      expect(existsSync(join(MIGRATIONS, `${tag}.sql`)), tag).toBe(true);
      expect(existsSync(join(MIGRATIONS, `meta/${tag.slice(0, 4)}_snapshot.json`)), tag).toBe(true);
    }
  });
});
