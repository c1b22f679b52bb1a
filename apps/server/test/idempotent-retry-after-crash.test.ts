import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";

// A create whose process died after its write but before its answer was stored: the key stays
// in flight, and once its lock runs out the client's retry takes it over and runs the request
// again (the crash trials, `pnpm soak`, found such creates applied twice). Staged here on the
// run's database: the first run completes, then its key is put back the way a crash leaves it.
let client: MongoClient;
beforeAll(() => {
  client = new MongoClient(inject("mongodbUri"));
});
afterAll(() => client.close());

const keysCollection = () =>
  client.db(inject("databaseName")).collection<{ _id: string }>("idempotency_keys");

/** The key as a run that died after writing leaves it: in flight, its lock long expired. */
async function dieBeforeAnswering(workspaceId: string, idempotencyKey: string): Promise<void> {
  const { modifiedCount } = await keysCollection().updateOne(
    { _id: `${workspaceId}:${idempotencyKey}` },
    { $set: { state: "in_flight", response: null, lock_expires_at: new Date(Date.now() - 1000) } },
  );
  expect(modifiedCount).toBe(1);
}

async function eventsOf(key: string, type: string, id: string) {
  const page = await api.get(`/open/v1/events?type=${type}&limit=100`, { key });
  expect(page.status).toBe(200);
  return (page.body.data as { data: { id: string } }[]).filter((event) => event.data.id === id);
}

describe("a create retried after its first run died mid-way", () => {
  const cases = [
    { path: "/open/v1/contacts", body: { name: "Ada, no email to catch a twin" }, type: "contact" },
    { path: "/open/v1/tickets", body: { subject: "Printer on fire" }, type: "ticket" },
  ];
  for (const { path, body, type } of cases) {
    it(`${path}: the retry answers the record the first run made, and no second one exists`, async () => {
      const { workspaceId, key } = await newWorkspace();
      const headers = { "Idempotency-Key": `crash-${type}` };
      const first = await api.post(path, { key, body, headers });
      expect(first.status).toBe(201);
      await dieBeforeAnswering(workspaceId, `crash-${type}`);

      const retried = await api.post(path, { key, body, headers });
      expect(retried.status).toBe(201);
      expect(retried.headers.get("idempotent-replayed")).toBeNull(); // it ran again
      expect(retried.body).toEqual(first.body);

      const listed = await api.get(`${path}?limit=100`, { key });
      expect(listed.body.data.map((record: { id: string }) => record.id)).toEqual([first.body.id]);
      expect(await eventsOf(key, `${type}.created`, first.body.id)).toHaveLength(1);

      // And the key now replays that answer.
      const replay = await api.post(path, { key, body, headers });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(first.body);
    });
  }
});
