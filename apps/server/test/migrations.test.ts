import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Db, MongoClient } from "mongodb";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { contactsPhonesInE164 } from "../src/migrations/007-contacts-phones-in-e164.js";
import { contactsSearchKeys } from "../src/migrations/008-contacts-search-keys.js";
import { MIGRATIONS } from "../src/migrations/index.js";
import { type Migration, migrationKey, runMigrations } from "../src/platform/database/migrations.js";
import { newId } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";
import { startInProcess } from "./helpers/in-process.js";
import { MAIN_ENTRY, startMain } from "./helpers/main-process.js";
import { clockMovedBy } from "./helpers/server-process.js";

/** `node --import` this to move a child's wall clock (helpers/shifted-date.mjs, `clockMovedBy`). */
const SHIFTED_DATE = join(import.meta.dirname, "helpers/shifted-date.mjs");

/** The migration lock's document, as the runner keeps it. */
interface LockDoc {
  _id: string;
  holder: string;
  expires_at: Date;
}

/**
 * The migration runner (platform/database/migrations.ts) on the run's database: each migration runs
 * once however many processes start at once, a dead holder's lock is taken over, a failed
 * migration is not recorded and runs again; and the real server's start and `deskline-server
 * migrate` run the list.
 */

const logger = createLogger("silent");
let client: MongoClient;
beforeAll(async () => {
  client = await new MongoClient(inject("mongodbUri")).connect();
});
afterAll(() => client?.close());
const freshDb = (): Db => client.db(`deskline_migrate_${newId("req")}`);

/** Migrations that count their runs in `runs` and take a while, so concurrent starts overlap. */
function counting(db: Db, count: number, ms = 100): Migration[] {
  return Array.from({ length: count }, (_, index) => ({
    id: index + 1,
    name: `count-${index + 1}`,
    async up() {
      await db
        .collection<{ _id: string; n: number }>("runs")
        .updateOne({ _id: `m${index + 1}` }, { $inc: { n: 1 } }, { upsert: true });
      await sleep(ms);
    },
  }));
}

const runsOf = async (db: Db) =>
  Object.fromEntries((await db.collection("runs").find().toArray()).map((doc) => [doc._id, doc.n]));

describe("migrations: once each, in order", () => {
  it("run each migration once when several processes start at once, in order, recorded", async () => {
    const db = freshDb();
    const migrations = counting(db, 3);
    const reports = await Promise.all(
      Array.from({ length: 4 }, () => runMigrations(db, migrations, { logger, pollMs: 20 })),
    );
    expect(await runsOf(db)).toEqual({ m1: 1, m2: 1, m3: 1 });
    expect(reports.flatMap((report) => report.applied).sort()).toEqual([
      "001-count-1",
      "002-count-2",
      "003-count-3",
    ]);
    const records = await db.collection("migrations").find().sort({ applied_at: 1 }).toArray();
    expect(records.map((record) => record._id)).toEqual(["001-count-1", "002-count-2", "003-count-3"]);
    expect(await db.collection("migration_lock").countDocuments()).toBe(0);
    // A later start has nothing to do and takes no lock, even while one is held.
    await db.collection<LockDoc>("migration_lock").insertOne({
      _id: "migrations",
      holder: "someone",
      expires_at: new Date(Date.now() + 60_000),
    });
    expect(await runMigrations(db, migrations, { logger })).toEqual({ applied: [], unknown: [] });
  });
});

describe("migrations: the lock", () => {
  it("take over the lock of a process that died holding it, once its lease ends", async () => {
    const db = freshDb();
    await db.collection<LockDoc>("migration_lock").insertOne({
      _id: "migrations",
      holder: "dead",
      expires_at: new Date(Date.now() + 300),
    });
    const started = Date.now();
    const report = await runMigrations(db, counting(db, 1, 0), { logger, pollMs: 20 });
    expect(report.applied).toEqual(["001-count-1"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("keep a live holder's lock while its migration outlasts the lease", async () => {
    const db = freshDb();
    // Each migration outlasts the lease (800 ms against 500), which holds by its renewals; a
    // 100 ms lease lost a renewal to a loaded machine's scheduling rather than to a dead holder.
    const migrations = counting(db, 2, 800);
    await Promise.all([
      runMigrations(db, migrations, { logger, leaseMs: 500, pollMs: 10 }),
      sleep(50).then(() => runMigrations(db, migrations, { logger, leaseMs: 500, pollMs: 10 })),
    ]);
    expect(await runsOf(db)).toEqual({ m1: 1, m2: 1 });
  });

  it("keep a held lock from a process whose clock runs a minute ahead (the lease is on the database's time)", async () => {
    const db = freshDb();
    const locks = db.collection<LockDoc>("migration_lock");
    // A live holder: its lease is 5 s of the database's time (this machine's), renewed every second.
    const renew = () =>
      locks.updateOne({ _id: "migrations" }, { $set: { expires_at: new Date(Date.now() + 5_000) } });
    await locks.insertOne({ _id: "migrations", holder: "alive", expires_at: new Date(Date.now() + 5_000) });
    const renewing = setInterval(() => void renew().catch(() => {}), 1_000);
    try {
      // `deskline-server migrate` on a host a minute ahead: on its own clock the lease ran out long ago.
      const env = {
        MONGODB_URI: inject("mongodbUri"),
        MONGODB_DATABASE: db.databaseName,
        ...clockMovedBy(60_000),
      };
      const ahead = startMain(env, ["--import", SHIFTED_DATE, ...MAIN_ENTRY, "migrate"]);
      const waiting = (async () => {
        while (!ahead.output().includes("another process is migrating the database; waiting for it")) {
          if (ahead.child.exitCode !== null)
            throw new Error(`it did not wait for the lock:\n${ahead.output()}`);
          await sleep(100);
        }
      })();
      await waiting;
      expect(await db.collection("migrations").countDocuments()).toBe(0);
      // The holder is done: the one ahead goes on.
      clearInterval(renewing);
      await locks.deleteOne({ _id: "migrations", holder: "alive" });
      expect(await ahead.exited).toBe(0);
      expect(await db.collection("migrations").countDocuments()).toBe(MIGRATIONS.length);
    } finally {
      clearInterval(renewing);
    }
  });
});

describe("migrations: failures, numbering, and where they run", () => {
  it("record nothing for a migration that fails, release the lock, and run it again next time", async () => {
    const db = freshDb();
    let fail = true;
    const flaky: Migration[] = [
      ...counting(db, 1, 0),
      {
        id: 2,
        name: "flaky",
        async up() {
          if (fail) throw new Error("disk full");
        },
      },
    ];
    await expect(runMigrations(db, flaky, { logger })).rejects.toThrow("disk full");
    expect((await db.collection("migrations").find().toArray()).map((record) => record._id)).toEqual([
      "001-count-1",
    ]);
    expect(await db.collection("migration_lock").countDocuments()).toBe(0);
    fail = false;
    expect((await runMigrations(db, flaky, { logger })).applied).toEqual(["002-flaky"]);
  });

  it("refuse a list that is not numbered 1, 2, 3…, and name records a newer version made", async () => {
    const db = freshDb();
    const [first, second] = counting(db, 2, 0) as [Migration, Migration];
    await expect(runMigrations(db, [second], { logger })).rejects.toThrow(/position 1/);
    await runMigrations(db, [first, second], { logger });
    expect((await runMigrations(db, [first], { logger })).unknown).toEqual(["002-count-2"]);
  });

  it("run at the start of two servers on one new database, each migration by one of them", async () => {
    const db = freshDb();
    const env = { MONGODB_URI: inject("mongodbUri"), MONGODB_DATABASE: db.databaseName, ROLE: "all" };
    // Two servers, each with its own database client (in this process): they meet only at the
    // migrations' lock. Each resolves once it delivers, which it does only once the database is prepared.
    const mains = await Promise.all([startInProcess(loadConfig(env)), startInProcess(loadConfig(env))]);
    const migrated = mains.flatMap((main) => main.output().match(/"msg":"migrated"/g) ?? []);
    expect(migrated).toHaveLength(MIGRATIONS.length);
    const records = await db.collection("migrations").find().sort({ id: 1 }).toArray();
    expect(records.map((record) => record._id)).toEqual(MIGRATIONS.map(migrationKey));
  });

  it("run alone with `deskline-server migrate`, which says what it applied", async () => {
    const db = freshDb();
    const env = { MONGODB_URI: inject("mongodbUri"), MONGODB_DATABASE: db.databaseName, LOG_LEVEL: "warn" };
    const args = [...MAIN_ENTRY, "migrate"];
    const first = startMain(env, args);
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain(`migrations applied: ${MIGRATIONS.map(migrationKey).join(", ")}`);
    const again = startMain(env, args);
    expect(await again.exited).toBe(0);
    expect(again.output()).toContain("migrations applied: none (the database was up to date)");
  });
});

describe("migration 7, contacts-phones-in-e164", () => {
  it("reads stored phones into E.164 in their workspace's country, and reports the others by id only", async () => {
    const db = freshDb();
    await db
      .collection<{ _id: string; name: string; created_at: Date; default_phone_country?: string }>(
        "workspaces",
      )
      .insertMany([
        { _id: "ws_us", name: "US", created_at: new Date(), default_phone_country: "US" },
        { _id: "ws_none", name: "None", created_at: new Date() },
      ]);
    const contact = (_id: string, workspace_id: string, phone?: string) => ({
      _id,
      workspace_id,
      name: _id,
      phone,
    });
    await db
      .collection<{ _id: string }>("contacts")
      .insertMany([
        contact("con_plus", "ws_none", "+1 (555) 010-2030"),
        contact("con_national", "ws_us", "555-010-2031"),
        contact("con_unread", "ws_none", "555-010-2032"),
        contact("con_text", "ws_us", "call reception"),
        contact("con_none", "ws_us"),
      ]);
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    await contactsPhonesInE164.up(db, logger);
    await contactsPhonesInE164.up(db, logger); // A rerun finds nothing left and reports nothing.
    const stored = await db.collection("contacts").find().sort({ _id: 1 }).toArray();
    const forms = Object.fromEntries(stored.map((doc) => [doc._id, [doc.phone_e164, doc.phone_country]]));
    expect(forms).toEqual({
      con_national: ["+15550102031", "US"],
      con_none: [undefined, undefined],
      con_plus: ["+15550102030", null],
      con_text: [null, null],
      con_unread: [null, null],
    });
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0] as string);
    expect(report).toMatchObject({ contacts: 4, unread: 2 });
    expect(report.contact_ids.sort()).toEqual(["con_text", "con_unread"]);
    for (const phone of ["555-010-2032", "call reception"]) expect(lines[0]).not.toContain(phone);
  });
});

describe("migration 8, contacts-search-keys", () => {
  it("gives stored contacts the keys a write would, in batches, and leaves keyed ones alone", async () => {
    const db = freshDb();
    const contacts = db.collection<Record<string, unknown> & { _id: string }>("contacts");
    // More than one batch (a thousand), so the loop goes round.
    const many = Array.from({ length: 1203 }, (_, index) => ({
      _id: `con_${String(index).padStart(5, "0")}`,
      workspace_id: "ws_a",
      name: `Person ${index}`,
    }));
    await contacts.insertMany([
      ...many,
      {
        _id: "con_full",
        workspace_id: "ws_a",
        name: "José Núñez",
        email: "jose.nunez@acme-corp.io",
        phone: "+1 (555) 010-2030",
        phone_e164: "+15550102030",
      },
      { _id: "con_kept", workspace_id: "ws_a", name: "Kept", search_keys: ["already"] },
    ]);
    await contactsSearchKeys.up(db, logger);
    await contactsSearchKeys.up(db, logger); // A rerun finds nothing left.
    expect(await contacts.countDocuments({ search_keys: { $exists: false } })).toBe(0);
    const full = await contacts.findOne({ _id: "con_full" });
    expect(full?.search_keys).toEqual(
      expect.arrayContaining(["jos", "nunez", "acme", "corp", "io", "555010"]),
    );
    expect(full?.search_keys).not.toContain("ose");
    expect((await contacts.findOne({ _id: "con_00007" }))?.search_keys).toEqual([
      "7",
      "p",
      "pe",
      "per",
      "pers",
      "perso",
      "person",
    ]);
    expect((await contacts.findOne({ _id: "con_kept" }))?.search_keys).toEqual(["already"]);
  });
});
