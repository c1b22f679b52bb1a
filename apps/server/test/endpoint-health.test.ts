import { type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { StoredEvent } from "../src/events/model.js";
import { newId } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";
import { createStore, ensureIndexes, type Store } from "../src/store.js";
import type { WebhookEndpointDoc } from "../src/webhooks/endpoints/store.js";

// The rule behind the operational events, on the real database, with two stores standing for
// two workers counting one endpoint's failures at the same time: one event per threshold per
// streak, each written on the endpoint in the update that crossed it, so it is there for the
// relay even when no writer relays it (a writer that died: here, writers that never relay), and
// the relay stores it once however often it runs.

let client: MongoClient;
let db: Db;
let workers: Store[];
const logger = createLogger("silent");

beforeAll(async () => {
  client = await new MongoClient(inject("mongodbUri")).connect();
  db = client.db(`deskline_health_${newId("req")}`);
  // Writers that never relay their events: only the sweep moves them, as after a crash.
  const config = { ...loadConfig({}), eventRelayImmediate: false };
  workers = [createStore(db, config, logger), createStore(db, config, logger)];
  await ensureIndexes(workers[0] as Store);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => {});
  await client.close();
});

const worker = (i: number) => workers[i % 2] as Store;

async function newEndpoint(): Promise<WebhookEndpointDoc> {
  const { doc } = await worker(0).webhookEndpoints.create(`ws_${newId("req")}`, {
    url: "https://h.invalid/x",
  });
  return doc;
}

async function pending(id: string): Promise<StoredEvent[]> {
  return (await worker(0).webhookEndpoints.collection.findOne({ _id: id }))?.pending_events ?? [];
}

const typesOf = (events: StoredEvent[]) => events.map((e) => e.type).sort();

describe("the failure streaks of one endpoint, counted by two workers at once", () => {
  it("15 concurrent failures: one failing, one disabled, the endpoint disabled at 15; kept on the endpoint until relayed, stored once", async () => {
    const endpoint = await newEndpoint();
    const disabledBy = await Promise.all(
      Array.from({ length: 15 }, (_, i) => worker(i).webhookEndpoints.deliveryFailed(endpoint, newId("dlv"))),
    );
    expect(disabledBy.filter(Boolean)).toHaveLength(1);
    const stored = await worker(1).webhookEndpoints.find(endpoint._id);
    expect(stored).toMatchObject({ status: "disabled", consecutive_failures: 15 });
    // Nothing relayed them: both events wait on the endpoint, written with the count.
    const waiting = await pending(endpoint._id);
    expect(typesOf(waiting)).toEqual(["webhook_endpoint.disabled", "webhook_endpoint.failing"]);
    expect(waiting.every((e) => e.about_endpoint_id === endpoint._id)).toBe(true);
    expect(
      JSON.parse(waiting.find((e) => e.type === "webhook_endpoint.failing")?.payload ?? "{}").data,
    ).toMatchObject({
      id: endpoint._id,
      consecutive_failures: 5,
      disable_after: 15,
    });

    // More failures after the disable count nothing and send nothing.
    expect(await worker(0).webhookEndpoints.deliveryFailed(endpoint, "dlv_late")).toBe(false);
    expect(await pending(endpoint._id)).toHaveLength(2);

    // Two sweeps at once, then one more: each event is stored once, and leaves the endpoint.
    await Promise.all([worker(0).relay.sweep(0), worker(1).relay.sweep(0)]);
    await worker(1).relay.sweep(0);
    const events = await worker(0).events.collection.find({ about_endpoint_id: endpoint._id }).toArray();
    expect(typesOf(events)).toEqual(["webhook_endpoint.disabled", "webhook_endpoint.failing"]);
    expect(await pending(endpoint._id)).toEqual([]);
  });

  it("a streak that reached the warning ends with one recovered, however many successes race; a shorter one with none", async () => {
    const endpoint = await newEndpoint();
    for (let i = 0; i < 5; i++) await worker(i).webhookEndpoints.deliveryFailed(endpoint, newId("dlv"));
    await Promise.all(
      [0, 1, 2, 3].map((i) => worker(i).webhookEndpoints.deliverySucceeded(endpoint, newId("dlv"))),
    );
    expect(typesOf(await pending(endpoint._id))).toEqual([
      "webhook_endpoint.failing",
      "webhook_endpoint.recovered",
    ]);
    expect((await worker(0).webhookEndpoints.find(endpoint._id))?.consecutive_failures).toBe(0);

    // A new streak of 4 (below the warning), then a success: no event.
    for (let i = 0; i < 4; i++) await worker(i).webhookEndpoints.deliveryFailed(endpoint, newId("dlv"));
    await worker(0).webhookEndpoints.deliverySucceeded(endpoint, newId("dlv"));
    expect(await pending(endpoint._id)).toHaveLength(2);
    // And a new streak reaching 5 warns again: once per streak, not once per endpoint.
    for (let i = 0; i < 6; i++) await worker(i).webhookEndpoints.deliveryFailed(endpoint, newId("dlv"));
    expect(typesOf(await pending(endpoint._id))).toEqual([
      "webhook_endpoint.failing",
      "webhook_endpoint.failing",
      "webhook_endpoint.recovered",
    ]);
  });
});

describe("each delivery counted once, and the owner's disable", () => {
  it("counts each delivery once, however many workers count it and in whatever order", async () => {
    const endpoint = await newEndpoint();
    const failed = Array.from({ length: 5 }, () => newId("dlv"));
    // Every failure counted by both workers at once (a worker that resumed after a pause counts
    // what the one that took over counted): 5 failures, one failing warning.
    await Promise.all(
      failed.flatMap((id) => [0, 1].map((i) => worker(i).webhookEndpoints.deliveryFailed(endpoint, id))),
    );
    expect((await worker(0).webhookEndpoints.find(endpoint._id))?.consecutive_failures).toBe(5);
    expect(typesOf(await pending(endpoint._id))).toEqual(["webhook_endpoint.failing"]);
    // A success, then a later failure, then the success counted again: the failure stays counted.
    const succeeded = newId("dlv");
    await worker(0).webhookEndpoints.deliverySucceeded(endpoint, succeeded);
    await worker(1).webhookEndpoints.deliveryFailed(endpoint, newId("dlv"));
    await worker(1).webhookEndpoints.deliverySucceeded(endpoint, succeeded);
    expect((await worker(0).webhookEndpoints.find(endpoint._id))?.consecutive_failures).toBe(1);
    expect(typesOf(await pending(endpoint._id))).toEqual([
      "webhook_endpoint.failing",
      "webhook_endpoint.recovered",
    ]);
  });

  it("the owner's disable records webhook_endpoint.disabled (reason owner) in the same write", async () => {
    const endpoint = await newEndpoint();
    await worker(0).webhookEndpoints.update(endpoint.workspace_id, endpoint._id, { status: "disabled" });
    const [event] = await pending(endpoint._id);
    expect(event?.type).toBe("webhook_endpoint.disabled");
    expect(JSON.parse(event?.payload ?? "{}").data).toMatchObject({ status: "disabled", reason: "owner" });
    // Deleting it relays the event first: the event outlives the endpoint.
    await worker(1).webhookEndpoints.delete(endpoint.workspace_id, endpoint._id);
    expect(await worker(0).events.collection.countDocuments({ _id: event?._id })).toBe(1);
  });
});
