import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { type Db, type Document, MongoClient } from "mongodb";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { type Clock, dateOf } from "../src/platform/clock.js";
import { DELETE_BATCH, deleteInBatches } from "../src/platform/database/batch-delete.js";
import { newId } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";
import { createStore, ensureIndexes, type Store } from "../src/store.js";
import { retentionSweeps, runRetentionSweeps } from "../src/sweeps.js";

/**
 * The retention sweeps (docs/operations.md "Retention"), each against the run's database: a
 * record made just past its collection's retention goes, one made just within it stays. Every
 * setting is given a value of its own here, so a sweep reading another's setting fails. Times are
 * relative to a clock the test holds, and the sweeps are run at its time.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const config = loadConfig({
  EVENT_RETENTION_DAYS: "10",
  DELIVERY_RETENTION_DAYS: "40",
  ATTEMPT_RETENTION_DAYS: "20",
  RECOVERY_RETENTION_DAYS: "50",
  TOMBSTONE_RETENTION_DAYS: "5",
  IDEMPOTENCY_TTL_HOURS: "48",
  CONSOLE_SESSION_TTL_MINUTES: "120",
});

let client: MongoClient;
let db: Db;
let store: Store;
/** The test's time: the sweeps run at it, and the fixtures are made relative to it. */
const startedAt = Date.now();
const clock: Clock = { now: () => startedAt };

beforeAll(async () => {
  client = await new MongoClient(inject("mongodbUri")).connect();
  // A database of its own: a sweep removes from the whole collection, other files' records too.
  db = client.db(`deskline_retention_${newId("req")}`);
  store = createStore(db, config, createLogger("silent"), clock);
  await ensureIndexes(store);
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

const workspace = newId("ws");
const unique = () => randomBytes(9).toString("base64url");

/** Each collection: how long it keeps a record, and a record made at a time. */
const COLLECTIONS: { collection: string; keptMs: number; made: (at: Date) => Document }[] = [
  {
    collection: "events",
    keptMs: 10 * DAY,
    made: (at) => ({ _id: newId("evt", at.getTime()), workspace_id: workspace, created_at: at }),
  },
  {
    collection: "webhook_deliveries",
    keptMs: 40 * DAY,
    made: (at) => {
      const _id = newId("dlv", at.getTime());
      return {
        _id,
        workspace_id: workspace,
        status: "succeeded",
        pending_key: `settled ${_id}`,
        created_at: at,
      };
    },
  },
  {
    collection: "delivery_attempts",
    keptMs: 20 * DAY,
    made: (at) => ({
      _id: newId("att", at.getTime()),
      workspace_id: workspace,
      delivery_id: newId("dlv"),
      attempt: 1,
      response: { status: 200, body: "ok" },
      created_at: at,
    }),
  },
  {
    collection: "webhook_recoveries",
    keptMs: 50 * DAY,
    // Kept from when it finished: an hour after it was made.
    made: (at) => ({
      _id: newId("rcv", at.getTime()),
      workspace_id: workspace,
      status: "succeeded",
      created_at: new Date(at.getTime() - HOUR),
      completed_at: at,
    }),
  },
  {
    collection: "tombstones",
    keptMs: 5 * DAY,
    made: (at) => ({ _id: newId("con"), workspace_id: workspace, object: "contact", updated_at: at }),
  },
  {
    collection: "idempotency_keys",
    keptMs: 48 * HOUR,
    made: (at) => ({
      _id: `${workspace}:${unique()}`,
      created_at: at,
      expires_at: new Date(at.getTime() + 48 * HOUR),
    }),
  },
  {
    collection: "console_sessions",
    keptMs: 2 * HOUR,
    made: (at) => ({
      _id: unique(),
      link_hash: unique(),
      session_hash: unique(),
      workspace_id: workspace,
      created_at: at,
      expires_at: new Date(at.getTime() + 2 * HOUR),
    }),
  },
  {
    collection: "webhook_filtered",
    keptMs: 48 * HOUR,
    made: (at) => ({ _id: `${newId("evt")}:${newId("we")}`, endpoint_id: newId("we"), at }),
  },
];

/** Runs one collection's sweep, as the server does, at the test's time. */
async function sweep(collection: string): Promise<number> {
  const found = retentionSweeps(store, config).find((entry) => entry.collection === collection);
  if (!found) throw new Error(`no sweep for ${collection}`);
  return found.sweep(dateOf(clock));
}

/** A logger writing its lines into `lines`. */
const capturing = (lines: string[]) =>
  pino(
    { level: "info" },
    new Writable({
      write: (chunk, _encoding, done) => {
        lines.push(`${chunk}`);
        done();
      },
    }),
  );

const ago = (ms: number) => new Date(clock.now() - ms);

describe("retention sweeps: what each removes and keeps", () => {
  it("has one for each collection that grows with traffic", () => {
    expect(retentionSweeps(store, config).map((entry) => entry.collection)).toEqual(
      COLLECTIONS.map((entry) => entry.collection),
    );
  });

  it.each(COLLECTIONS)(
    "$collection: removes what is past its retention, keeps what is not",
    async (entry) => {
      const collection = db.collection(entry.collection);
      const old = entry.made(ago(entry.keptMs + HOUR));
      const recent = entry.made(ago(entry.keptMs - HOUR));
      await collection.insertMany([old, recent]);

      expect(await sweep(entry.collection)).toBe(1);
      expect(await collection.findOne({ _id: old._id })).toBeNull();
      expect(await collection.findOne({ _id: recent._id })).not.toBeNull();
      // Until the clock moves on, there is nothing more to remove.
      expect(await sweep(entry.collection)).toBe(0);
    },
  );

  it("keeps an old delivery still pending or not yet counted in its endpoint's health, and a running recovery", async () => {
    const at = ago(41 * DAY);
    const delivery = (status: string, extra: Document = {}): Document => {
      const _id = newId("dlv", at.getTime());
      return {
        _id,
        workspace_id: workspace,
        status,
        pending_key: `settled ${_id}`,
        created_at: at,
        ...extra,
      };
    };
    const pending = delivery("pending");
    const uncounted = delivery("failed", { health_pending: true });
    await db.collection("webhook_deliveries").insertMany([pending, uncounted]);
    const running: Document = {
      _id: newId("rcv", at.getTime()),
      workspace_id: workspace,
      status: "running",
      completed_at: null,
      created_at: at,
    };
    await db.collection("webhook_recoveries").insertOne(running);

    expect(await sweep("webhook_deliveries")).toBe(0);
    expect(await sweep("webhook_recoveries")).toBe(0);
    await db
      .collection<{ _id: string }>("webhook_deliveries")
      .updateOne({ _id: uncounted._id }, { $unset: { health_pending: "" } });
    expect(await sweep("webhook_deliveries")).toBe(1);
  });
});

describe("retention sweeps: batches, failures and stopping", () => {
  it("removes more than a batch's worth in one sweep", async () => {
    const attempt = COLLECTIONS.find((entry) => entry.collection === "delivery_attempts")?.made;
    if (!attempt) throw new Error("unreachable");
    const old = Array.from({ length: 2 * DELETE_BATCH + 500 }, () => attempt(ago(21 * DAY)));
    const recent = attempt(ago(19 * DAY));
    await db.collection("delivery_attempts").insertMany([...old, recent]);

    expect(await sweep("delivery_attempts")).toBe(old.length);
    expect(await db.collection("delivery_attempts").countDocuments({ _id: recent._id })).toBe(1);
  });

  it("rests between batches, and only between them", async () => {
    const collection = db.collection<{ _id: string; batch: string; at: Date }>("batch_delete");
    const batch = unique();
    await collection.insertMany(
      Array.from({ length: 450 }, (_, n) => ({ _id: `${batch}:${n}`, batch, at: ago(n < 430 ? DAY : 0) })),
    );
    const rests: number[] = [];
    const removed = await deleteInBatches(
      collection,
      { batch, at: { $lt: ago(HOUR) } },
      { batchSize: 100, rest: async (tookMs) => rests.push(tookMs) },
    );
    expect(removed).toBe(430);
    // Batches of 100, 100, 100, 100 and 30: a rest after each full one.
    expect(rests).toHaveLength(4);
    expect(await collection.countDocuments({ batch })).toBe(20);
  });

  it("runs every sweep though one fails, and logs the failure", async () => {
    const lines: string[] = [];
    const logger = capturing(lines);
    const removed = await runRetentionSweeps(
      [
        { collection: "broken", sweep: () => Promise.reject(new Error("database went away")) },
        { collection: "working", sweep: async () => 3 },
      ],
      logger,
    );
    expect(removed).toEqual({ working: 3 });
    expect(lines.join("")).toMatch(/"collection":"broken".*retention sweep failed/);
    expect(lines.join("")).toMatch(/"removed":\{"working":3\}/);
  });

  it("starts no other sweep once stopped, and logs no failure of the one running then", async () => {
    let stopped = false;
    const lines: string[] = [];
    const ran: string[] = [];
    const logger = capturing(lines);
    const removed = await runRetentionSweeps(
      [
        {
          collection: "stopping",
          sweep: async () => {
            ran.push("stopping");
            stopped = true;
            throw new Error("client was closed");
          },
        },
        { collection: "next", sweep: async () => ran.push("next") },
      ],
      logger,
      { stopped: () => stopped },
    );
    expect(ran).toEqual(["stopping"]);
    expect(removed).toEqual({});
    expect(lines).toEqual([]);
  });
});

describe("retention settings", () => {
  const days = (ms: number) => ms / DAY;
  const retention = (env: NodeJS.ProcessEnv) => {
    const read = loadConfig(env);
    return [
      read.eventRetentionMs,
      read.deliveryRetentionMs,
      read.attemptRetentionMs,
      read.recoveryRetentionMs,
      read.tombstoneRetentionMs,
    ].map(days);
  };

  it("default to 30 days of events and tombstones, 90 of deliveries, attempts and recoveries", () => {
    expect(retention({})).toEqual([30, 90, 90, 90, 30]);
  });

  it("follow the settings they default to", () => {
    // Deliveries outlast events however long those are kept; the rest follow what they go with.
    expect(retention({ EVENT_RETENTION_DAYS: "120" })).toEqual([120, 120, 120, 120, 120]);
    expect(retention({ DELIVERY_RETENTION_DAYS: "60" })).toEqual([30, 60, 60, 60, 30]);
  });

  it("refuse deliveries kept shorter than events, and attempts longer than deliveries", () => {
    expect(() => loadConfig({ DELIVERY_RETENTION_DAYS: "10" })).toThrow(ConfigError);
    expect(() => loadConfig({ DELIVERY_RETENTION_DAYS: "10" })).toThrow(
      /DELIVERY_RETENTION_DAYS \(10\) must be at least EVENT_RETENTION_DAYS \(30\): a recovery/,
    );
    expect(() => loadConfig({ ATTEMPT_RETENTION_DAYS: "91" })).toThrow(
      /ATTEMPT_RETENTION_DAYS \(91\) must be at most DELIVERY_RETENTION_DAYS \(90\)/,
    );
    expect(() => loadConfig({ TOMBSTONE_RETENTION_DAYS: "0" })).toThrow(
      /TOMBSTONE_RETENTION_DAYS must be an integer >= 1, got "0"/,
    );
  });
});
