import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeDb, getClient } from "@/db/client";
import { writeBatch } from "@/db/write-batch";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { dueWork } from "@/lib/cluster/due-work";
import { freshDatabase } from "../support/database";

// The one read an idle holder of the background lease makes per tick (lib/cluster/due-work.ts):
// each flag is what its worker would find.

let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await freshDatabase("due-work");
});
afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

const event = (type: string) => ({ type, queueId: null, actor: SYSTEM_ACTOR, data: { type } });
const nothing = {
  sweep: false,
  webhooks: false,
  emailEvents: false,
  emailDue: false,
  slackEvents: false,
  slackDue: false,
};

it("asks only about the configured outboxes, and about planners' cursors behind the log", async () => {
  expect(await dueWork({ email: false, slack: false })).toEqual(nothing);
  // no cursor yet: each planner's first pass has to create it
  expect(await dueWork({ email: true, slack: true })).toEqual({
    ...nothing,
    emailEvents: true,
    slackEvents: true,
  });

  await writeBatch([eventRows(event("one"))]);
  const seq = Number((await getClient().execute("select max(seq) from events")).rows[0]![0]);
  await getClient().execute({
    sql: "insert into notification_cursors (name, position) values ('events', ?), ('slack', ?)",
    args: [seq, seq],
  });
  expect(await dueWork({ email: true, slack: true })).toEqual(nothing);

  await writeBatch([eventRows(event("two"))]);
  expect(await dueWork({ email: true, slack: true })).toEqual({
    ...nothing,
    emailEvents: true,
    slackEvents: true,
  });
  expect(await dueWork({ email: false, slack: true })).toEqual({ ...nothing, slackEvents: true });
});
