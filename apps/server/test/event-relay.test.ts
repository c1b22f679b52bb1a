import { type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { Events } from "../src/events/events.js";
import { newEvent } from "../src/events/model.js";
import { EventRelay, pushEvent, type WithPendingEvents } from "../src/events/outbox-relay.js";
import { newId } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";

// The relay on its own, over the run's real database: what several processes relaying the same
// leftovers, and a relay interrupted half-way, leave in `events`. Each test has its own
// collection and workspace; two clients stand for two server processes.

type Doc = WithPendingEvents & { _id: string; workspace_id: string; name: string };

const clients: MongoClient[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
});

async function connect(): Promise<Db> {
  const client = await new MongoClient(inject("mongodbUri")).connect();
  clients.push(client);
  return client.db(inject("databaseName"));
}

let first: Db;
let second: Db;
beforeAll(async () => {
  [first, second] = [await connect(), await connect()];
});

const logger = createLogger("silent");

/** A relay over `collection` as one process builds it (sweeps only, unless `immediate`). */
async function relayOn(db: Db, collection: string, immediate = false) {
  const events = new Events(db, loadConfig({}).eventRetentionMs);
  const relay = new EventRelay(db, events, { immediate, logger });
  relay.track(collection);
  await relay.ensureIndexes();
  return { relay, events };
}

/** A document of `collection` written with `count` events, as a writer that then crashed left it. */
async function leftBehind(db: Db, collection: string, count: number) {
  const workspaceId = newId("ws");
  const id = newId("con");
  const pending = Array.from({ length: count }, (_, i) =>
    newEvent(workspaceId, "contact.updated", { id, object: "contact", n: i }, { n: i - 1 }),
  );
  await db.collection<Doc>(collection).insertOne({ _id: id, workspace_id: workspaceId, name: "x" });
  for (const event of pending) {
    await db
      .collection<Doc>(collection)
      .updateOne({ _id: id }, { $set: { name: `v${event._id}` }, ...pushEvent(event) });
  }
  return { id, workspaceId, pending };
}

const eventsOf = (db: Db, workspaceId: string) =>
  db.collection("events").find({ workspace_id: workspaceId }).sort({ _id: 1 }).toArray();

describe("the event relay", () => {
  it("moves leftovers into events in order, once, and leaves the document without pending events", async () => {
    const collection = `relay_${newId("req")}`;
    const { relay } = await relayOn(first, collection);
    const { id, workspaceId, pending } = await leftBehind(first, collection, 3);
    expect(await relay.sweep(0)).toBe(3);
    const stored = await eventsOf(first, workspaceId);
    expect(stored.map((e) => e._id)).toEqual(pending.map((e) => e._id));
    expect(stored.map((e) => e.payload)).toEqual(pending.map((e) => e.payload));
    const doc = await first.collection<Doc>(collection).findOne({ _id: id });
    expect(doc?.pending_events).toEqual([]);
    expect(await relay.sweep(0)).toBe(0);
  });

  it("leaves events younger than the grace period to their writer", async () => {
    const collection = `relay_${newId("req")}`;
    const { relay } = await relayOn(first, collection);
    const { workspaceId } = await leftBehind(first, collection, 1);
    expect(await relay.sweep(60_000)).toBe(0);
    expect(await eventsOf(first, workspaceId)).toEqual([]);
    expect(await relay.sweep(60_000, new Date(Date.now() + 120_000))).toBe(1);
  });

  it("two processes sweeping the same leftovers at once store every event exactly once", async () => {
    const collection = `relay_${newId("req")}`;
    const a = await relayOn(first, collection);
    const b = await relayOn(second, collection);
    const docs = await Promise.all(Array.from({ length: 10 }, () => leftBehind(first, collection, 2)));
    await Promise.all([a.relay.sweep(0), b.relay.sweep(0), a.relay.sweep(0), b.relay.sweep(0)]);
    for (const { workspaceId, pending } of docs) {
      expect((await eventsOf(first, workspaceId)).map((e) => e._id)).toEqual(pending.map((e) => e._id));
    }
    const left = await first
      .collection<Doc>(collection)
      .countDocuments({ "pending_events.0": { $exists: true } });
    expect(left).toBe(0);
  });

  it("an event recorded by a relay that died before removing it is not stored twice", async () => {
    const collection = `relay_${newId("req")}`;
    const { relay, events } = await relayOn(first, collection);
    const { workspaceId, pending } = await leftBehind(first, collection, 2);
    // The dead relay got as far as recording the first event.
    expect(await events.insertOnce(pending.slice(0, 1))).toEqual([true]);
    expect(await relay.sweep(0)).toBe(2);
    expect((await eventsOf(first, workspaceId)).map((e) => e._id)).toEqual(pending.map((e) => e._id));
  });

  it("a failing hook leaves the event pending, so the next relay runs the hook again", async () => {
    const collection = `relay_${newId("req")}`;
    const { relay } = await relayOn(first, collection);
    const seen: string[] = [];
    let failing = true;
    relay.addHook(async (events) => {
      seen.push(...events.map((event) => event._id));
      if (failing) throw new Error("delivery store down");
    });
    const { id, pending } = await leftBehind(first, collection, 1);
    await expect(relay.sweep(0)).rejects.toThrow("delivery store down");
    expect((await first.collection<Doc>(collection).findOne({ _id: id }))?.pending_events).toHaveLength(1);
    failing = false;
    expect(await relay.sweep(0)).toBe(1);
    expect(seen).toEqual([pending[0]?._id, pending[0]?._id]);
  });

  it("deleting a document relays its pending events first", async () => {
    const collection = `relay_${newId("req")}`;
    const { relay } = await relayOn(first, collection);
    const { id, workspaceId, pending } = await leftBehind(first, collection, 2);
    const target = first.collection<Doc>(collection);
    const deleted = await relay.deleteDrained(target, { _id: id, workspace_id: workspaceId });
    expect(deleted?._id).toBe(id);
    expect(await target.findOne({ _id: id })).toBeNull();
    expect((await eventsOf(first, workspaceId)).map((e) => e._id)).toEqual(pending.map((e) => e._id));
    expect(await relay.deleteDrained(target, { _id: id, workspace_id: workspaceId })).toBeNull();
  });
});
