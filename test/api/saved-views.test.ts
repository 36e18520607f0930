import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, savedViews } from "@/db/schema";
import { startApiServer } from "../support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";
import { apiClient, type ApiClient, type ApiResponse } from "../support/http";
import type { TestServer } from "../support/server";

// Shared saved views over HTTP: members save and list them, names are unique per queue, other
// teams see nothing, and only the creator or a lead deletes one.

let server: TestServer;
let queue: { id: string; name: string };
let otherQueue: { id: string; name: string };
let dana: ApiClient; // reviewer in `queue`
let riley: ApiClient; // another reviewer in `queue`
let lee: ApiClient; // lead of `queue`
let nora: ApiClient; // reviewer of `otherQueue` only
let agent: ApiClient;

beforeAll(async () => {
  server = await startApiServer("saved-views");
  queue = await makeQueue();
  otherQueue = await makeQueue();
  const client = async (name: string, queueName: string, role?: "lead") =>
    apiClient(
      server.baseUrl,
      (await makeReviewer({ name, queues: [{ name: queueName, role }] })).token,
    );
  dana = await client("Dana Reviewer", queue.name);
  riley = await client("Riley Reviewer", queue.name);
  lee = await client("Lee Lead", queue.name, "lead");
  nora = await client("Nora Outsider", otherQueue.name);
  agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [queue.name] })).key);
});
afterAll(() => server?.stop());

const remove = async (client: ApiClient, viewId: string): Promise<ApiResponse> => {
  const response = await client.raw(`/views/${viewId}`, { method: "DELETE" });
  return { status: response.status, body: await response.json(), headers: response.headers };
};

const writes = async () => ({
  views: (await getDb().select({ n: count() }).from(savedViews))[0]!.n,
  events: (await getDb().select({ n: count() }).from(events))[0]!.n,
});

let seq = 0;
const save = (client: ApiClient, filters: Record<string, unknown> = { tool: "delete_files" }) =>
  client.post("/views", { queueId: queue.id, name: `View ${++seq}`, filters });

describe("saving and listing views", () => {
  it("saves a view that every member of the queue lists, with a view.saved event", async () => {
    const saved = await dana.post("/views", {
      queueId: queue.id,
      name: "  Deletions  ",
      filters: { tool: "delete_files", status: "all" },
    });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({
      name: "Deletions",
      queue: { id: queue.id, name: queue.name },
      filters: { tool: "delete_files", status: "all" },
      createdBy: { name: "Dana Reviewer" },
      canDelete: true,
    });

    const listed = await riley.get("/views");
    expect(listed.status).toBe(200);
    const seen = listed.body.views.find((v: { id: string }) => v.id === saved.body.id);
    expect(seen).toMatchObject({ name: "Deletions", canDelete: false });
    expect((await lee.get("/views")).body.views).toContainEqual(
      expect.objectContaining({ id: saved.body.id, canDelete: true }),
    );

    const [event] = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "view.saved"))
      .orderBy(events.seq);
    expect(event).toMatchObject({ queueId: queue.id, actorName: "Dana Reviewer" });
    expect(event!.data).toMatchObject({ viewId: saved.body.id, name: "Deletions" });
  });

  it("refuses a name already used in the queue with 409 already_exists, writing nothing", async () => {
    const first = await save(dana);
    const before = await writes();
    const again = await riley.post("/views", {
      queueId: queue.id,
      name: first.body.name,
      filters: { kind: "plan" },
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_exists");
    expect(again.body.error.current).toMatchObject({ id: first.body.id });
    expect(await writes()).toEqual(before);
    // the same name in another queue is fine
    const elsewhere = await nora.post("/views", {
      queueId: otherQueue.id,
      name: first.body.name,
      filters: {},
    });
    expect(elsewhere.status).toBe(201);
  });

  it.each([
    ["an empty name", { name: " ", filters: {} }],
    ["a name over 60 characters", { name: "x".repeat(61), filters: {} }],
    ["an unknown kind", { name: "Bad kind", filters: { kind: "both" } }],
    ["an unknown status", { name: "Bad status", filters: { status: "open" } }],
    ["a tool over 200 characters", { name: "Long tool", filters: { tool: "t".repeat(201) } }],
    ["an unknown filter", { name: "Extra", filters: { colour: "red" } }],
    ["no filters", { name: "No filters" }],
  ])("refuses %s with 400 invalid_request, writing nothing", async (_, body) => {
    const before = await writes();
    const response = await dana.post("/views", { queueId: queue.id, ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_request");
    expect(response.body.error.issues.length).toBeGreaterThan(0);
    expect(await writes()).toEqual(before);
  });
});

describe("who may see and change views", () => {
  it("shows a member of another queue none of this queue's views, and 404s their save and delete", async () => {
    const saved = await save(dana);
    const listed = await nora.get("/views");
    expect(listed.status).toBe(200);
    expect(listed.body.views.every((v: any) => v.queue.id === otherQueue.id)).toBe(true);

    const before = await writes();
    const saving = await nora.post("/views", { queueId: queue.id, name: "Sneaky", filters: {} });
    expect(saving.status).toBe(404);
    expect(saving.body.error.code).toBe("not_found");
    const deleting = await remove(nora, saved.body.id);
    expect(deleting.status).toBe(404);
    expect(deleting.body.error.code).toBe("not_found");
    expect(await writes()).toEqual(before);
  });

  it("refuses agent keys with 403", async () => {
    const saved = await save(dana);
    expect((await agent.get("/views")).status).toBe(403);
    const saving = await agent.post("/views", { queueId: queue.id, name: "Agent", filters: {} });
    expect(saving.status).toBe(403);
    expect(saving.body.error.code).toBe("forbidden");
    expect((await remove(agent, saved.body.id)).status).toBe(403);
  });

  it("answers 401 without credentials", async () => {
    expect((await apiClient(server.baseUrl).get("/views")).status).toBe(401);
  });

  it("lets the creator delete their view, with a view.deleted event", async () => {
    const saved = await save(riley);
    const deleted = await remove(riley, saved.body.id);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: saved.body.id, name: saved.body.name });
    expect((await dana.get("/views")).body.views.map((v: any) => v.id)).not.toContain(
      saved.body.id,
    );
    const [event] = await getDb().select().from(events).where(eq(events.type, "view.deleted"));
    expect(event).toMatchObject({ queueId: queue.id, actorName: "Riley Reviewer" });
    expect((await remove(riley, saved.body.id)).status).toBe(404);
  });

  it("lets a lead delete someone else's view", async () => {
    const saved = await save(dana);
    expect((await remove(lee, saved.body.id)).status).toBe(200);
    expect((await dana.get("/views")).body.views.map((v: any) => v.id)).not.toContain(
      saved.body.id,
    );
  });

  it("refuses a plain member deleting another's view with 403, writing nothing", async () => {
    const saved = await save(dana);
    const before = await writes();
    const response = await remove(riley, saved.body.id);
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe("forbidden");
    expect(await writes()).toEqual(before);
    expect((await riley.get("/views")).body.views.map((v: any) => v.id)).toContain(saved.body.id);
  });
});
