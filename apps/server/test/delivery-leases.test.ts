import { Worker } from "node:worker_threads";
import { type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { loadConfig } from "../src/config.js";
import { newEvent } from "../src/events/model.js";
import { DatabaseClock } from "../src/platform/database/database-clock.js";
import { HeldLease } from "../src/platform/database/lease.js";
import { newId } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";
import { createStore, ensureIndexes, type Store } from "../src/store.js";
import { INTERRUPTED_ATTEMPT } from "../src/webhooks/deliveries/attempts.js";
import { countHealth, sweepHealth } from "../src/webhooks/delivery/health-count.js";
import { createDeliveryAgent, postWebhook } from "../src/webhooks/delivery/http-client.js";
import { eventually } from "./helpers/main-process.js";
import { createTcpProxy } from "./helpers/tcp-proxy.js";

/**
 * The pieces that keep delivery's promises when workers pause, die or drift, each on the real
 * database in this process (the fault suite, delivery-faults.test.ts, shows them with real worker
 * processes): claims held apart from the queue order, outcomes fenced by the claim, a real
 * attempt replacing a take-over's placeholder, outcomes counted once, the database's clock, a
 * lease read on the monotonic clock, and an answer that arrives during a pause.
 */

let client: MongoClient;
let db: Db;
let store: Store;
const logger = createLogger("silent");
const clock = { now: () => Date.now() };

beforeAll(async () => {
  client = await new MongoClient(inject("mongodbUri")).connect();
  db = client.db(`deskline_leases_${newId("req")}`);
  // No worker here: queueing records deliveries and tells no lane.
  store = createStore(db, loadConfig({}), logger, clock);
  await ensureIndexes(store);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => {});
  await client.close();
});

/** Queues one delivery per event to a new endpoint, due at `dueAt` (oldest event first). */
async function queued(count: number, dueAt = new Date(Date.now() - 1_000)) {
  const { doc: endpoint } = await store.webhookEndpoints.create(`ws_${newId("req")}`, {
    url: "https://leases.invalid/hooks",
  });
  const events = Array.from({ length: count }, () => newEvent(endpoint.workspace_id, "contact.created", {}));
  await store.deliveryQueue.queue(
    events.map((event) => ({ event, endpointId: endpoint._id })),
    { origin: "event", dueAt: () => dueAt },
  );
  return { endpoint, events };
}

const deliveries = () => store.webhookDeliveries;
const now = () => new Date();

describe("a claim", () => {
  it("leaves a delivery in its place in line: what a dead worker held goes first to the next", async () => {
    const { endpoint, events } = await queued(6);
    const first = await deliveries().claim(endpoint._id, 2, 200, now());
    expect(first.map((d) => d.event_id)).toEqual(events.slice(0, 2).map((e) => e._id));
    // Its worker died; the lane's next holder claims the held two again, before the later four.
    const taken = await deliveries().claim(endpoint._id, 3, 60_000, new Date(Date.now() + 500));
    expect(taken.map((d) => [d.event_id, d.interrupted, d.attempt])).toEqual([
      [events[0]?._id, true, 2],
      [events[1]?._id, true, 2],
      [events[2]?._id, false, 1],
    ]);
    const stored = await deliveries().collection.findOne({ _id: taken[0]?._id as string });
    expect(stored?.due_at?.getTime()).toBeLessThan(Date.now());
    expect(stored?.lease_holder).toBe(taken[0]?.holder);
    expect(stored?.lease_until?.getTime()).toBeGreaterThan(Date.now() + 50_000);
  });

  it("records an outcome only for the claim holding the delivery, and gives back what it did not send", async () => {
    const { endpoint } = await queued(2);
    const [lost, unsent] = await deliveries().claim(endpoint._id, 2, 100, now());
    if (!lost || !unsent) throw new Error("nothing claimed");
    const [retaken] = await deliveries().claim(endpoint._id, 1, 60_000, new Date(Date.now() + 200));
    expect(retaken?._id).toBe(lost._id);
    const at = now();
    const settled = {
      kind: "settled" as const,
      status: "succeeded" as const,
      attempt: 1,
      at,
      statusCode: 204,
    };
    // The first worker resumes and writes what it learnt: nothing applies.
    expect(await deliveries().recordOutcomes([{ id: lost._id, holder: lost.holder, outcome: settled }])).toBe(
      0,
    );
    const record = { id: lost._id, holder: retaken?.holder as string, outcome: { ...settled, attempt: 2 } };
    expect(await deliveries().recordOutcomes([record])).toBe(1);
    // A delivery claimed and not sent goes back: claimable at once, its attempt not counted.
    await deliveries().unclaim([unsent]);
    const [again] = await deliveries().claim(endpoint._id, 1, 60_000, now());
    expect([again?._id, again?.attempt, again?.interrupted]).toEqual([unsent._id, 1, false]);
  });
});

describe("the attempts log", () => {
  it("keeps the real attempt where a take-over wrote a placeholder first", async () => {
    const { endpoint, events } = await queued(1);
    const base = {
      workspace_id: endpoint.workspace_id,
      delivery_id: newId("dlv"),
      endpoint_id: endpoint._id,
      event_id: events[0]?._id as string,
      event_type: "contact.created" as const,
      attempt: 1,
    };
    const placeholder = { ...base, status_code: null, duration_ms: 0, succeeded: false, created_at: now() };
    await store.deliveryAttempts.insertOnce([{ ...placeholder, error: INTERRUPTED_ATTEMPT }]);
    const real = {
      ...base,
      status_code: 204,
      duration_ms: 1500,
      error: null,
      succeeded: true,
      created_at: now(),
    };
    await store.deliveryAttempts.insertOnce([real]);
    // A second placeholder (another take-over) changes nothing.
    await store.deliveryAttempts.insertOnce([{ ...placeholder, error: INTERRUPTED_ATTEMPT }]);
    const logged = await store.deliveryAttempts.collection.find({ delivery_id: base.delivery_id }).toArray();
    expect(logged.map((a) => [a.attempt, a.status_code, a.error, a.succeeded])).toEqual([
      [1, 204, null, true],
    ]);
  });
});

describe("an endpoint's health", () => {
  /** Settles the endpoint's deliveries as failed, marked for counting, as a lane does. */
  async function failAll(count: number) {
    const { endpoint } = await queued(count);
    const claimed = await deliveries().claim(endpoint._id, count, 60_000, now());
    const failed = {
      kind: "settled" as const,
      status: "failed" as const,
      at: now(),
      statusCode: 500,
      counts: true,
    };
    await deliveries().recordOutcomes(
      claimed.map((d) => ({ id: d._id, holder: d.holder, outcome: { ...failed, attempt: d.attempt } })),
    );
    return { endpoint, ids: claimed.map((d) => d._id) };
  }

  it("counts each failed delivery once, however many workers count it", async () => {
    const { endpoint, ids } = await failAll(5);
    // Two workers read the marks before either clears them (one resumed after a pause).
    const [a, b] = await Promise.all([deliveries().healthPending(ids), deliveries().healthPending(ids)]);
    await Promise.all([
      countHealth({ store, logger, clock }, a ?? []),
      countHealth({ store, logger, clock }, b ?? []),
    ]);
    const counted = await store.webhookEndpoints.collection.findOne({ _id: endpoint._id });
    expect(counted?.consecutive_failures).toBe(5);
    // Relayed or still on the endpoint: every event its count wrote, once.
    const relayed = await store.events.collection.find({ about_endpoint_id: endpoint._id }).toArray();
    const types = [...(counted?.pending_events ?? []), ...relayed].map((e) => e.type).sort();
    expect(types.filter((t) => t === "webhook_delivery.failed")).toHaveLength(5);
    expect(types.filter((t) => t === "webhook_endpoint.failing")).toHaveLength(1);
    expect(await deliveries().healthPending(ids)).toEqual([]);
  });

  it("counts what a worker that died before counting left, once a lease has passed", async () => {
    const { endpoint } = await failAll(3);
    expect([...(await sweepHealth({ store, logger, clock }, 60_000))]).toEqual([]);
    expect((await store.webhookEndpoints.find(endpoint._id))?.consecutive_failures).toBe(0);
    // A lease of 1 ms has passed by now (not a clock moved a minute on: the events the count writes
    // would get ids a minute ahead, and every id this worker makes after would sort at random).
    await new Promise((done) => setTimeout(done, 5));
    await sweepHealth({ store, logger, clock }, 1);
    expect((await store.webhookEndpoints.find(endpoint._id))?.consecutive_failures).toBe(3);
  });
});

describe("the database's clock", () => {
  it("started while its answers came back slowly, corrects itself within seconds, not at the next 30 s ask", async () => {
    const proxy = await createTcpProxy(inject("mongodbUri"));
    await proxy.open();
    const slow = await new MongoClient(proxy.uri).connect();
    const databaseClock = new DatabaseClock(slow.db(db.databaseName));
    try {
      // As on a busy machine, which reads each answer late: every answer looks 150 ms old.
      proxy.delayAnswers(300);
      await databaseClock.start();
      proxy.delayAnswers(0);
      expect(databaseClock.offsetMs(), "answers that came back late put the database behind").toBeGreaterThan(
        100,
      );
      await eventually(
        async () => databaseClock.offsetMs(),
        (offset) => Math.abs(offset) < 25,
        "the clock to ask again and keep a prompt answer",
        5_000,
      );
    } finally {
      databaseClock.stop();
      await slow.close();
      await proxy.cut();
    }
  });

  it("keeps the database's time when this process's wall clock jumps a minute", async () => {
    const databaseClock = new DatabaseClock(db);
    await databaseClock.start(60_000);
    try {
      // mongo-java-server or mongod on this machine: the same time as ours, within the round trip.
      expect(Math.abs(databaseClock.offsetMs())).toBeLessThan(250);
      const before = databaseClock.now();
      const realNow = Date.now;
      vi.spyOn(Date, "now").mockImplementation(() => realNow() + 60_000);
      expect(Math.abs(databaseClock.now() - before)).toBeLessThan(250);
      expect(databaseClock.offsetMs()).toBeGreaterThan(59_000);
    } finally {
      vi.restoreAllMocks();
      databaseClock.stop();
    }
  });
});

describe("a held lease", () => {
  it("has room for a send only while the send ends within it", () => {
    const since = performance.now();
    expect(new HeldLease(since, 10_000, 1_000).hasRoom()).toBe(true);
    expect(new HeldLease(since - 9_500, 10_000, 1_000).hasRoom()).toBe(false);
    const renewed = new HeldLease(since - 9_500, 10_000, 1_000);
    renewed.renewed(performance.now());
    expect(renewed.hasRoom()).toBe(true);
  });
});

/** A receiver on its own thread, so that it answers while this thread's event loop is blocked. */
const RECEIVER = `
  const { createServer } = require("node:http");
  const { parentPort } = require("node:worker_threads");
  // Says it has the request, then answers a moment later: while the other thread is blocked.
  const server = createServer((req, res) =>
    req.resume().on("end", () => {
      parentPort.postMessage("received");
      setTimeout(() => res.writeHead(204).end(), 100);
    }),
  );
  server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));
  parentPort.on("message", () => server.close(() => process.exit(0)));
`;

describe("an answer that arrives while the process is paused", () => {
  it("is taken as the answer, not as a timeout", async () => {
    const receiver = new Worker(RECEIVER, { eval: true });
    const port = await new Promise<number>((done) => receiver.once("message", done));
    const agent = createDeliveryAgent({ allowPrivateNetworks: true, ca: [], connections: null });
    try {
      const received = new Promise((done) => receiver.once("message", done));
      const attempt = postWebhook(agent, `http://127.0.0.1:${port}/hooks`, "{}", {}, 300);
      // The receiver has the request; then this thread stops for longer than the timeout (a long
      // GC, SIGSTOP), and the answer comes meanwhile.
      await received;
      const until = performance.now() + 800;
      while (performance.now() < until) {
        // blocked
      }
      expect(await attempt).toEqual({
        kind: "response",
        statusCode: 204,
        answer: { headers: {}, body: "", body_truncated: false },
      });
    } finally {
      await agent.close();
      receiver.postMessage("stop");
    }
  });
});
