import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Collection, CreateIndexesOptions, Db, IndexSpecification } from "mongodb";
import { type Clock, dateOf } from "../clock.js";
import type { Logger } from "../logger.js";
import { DatabaseClock } from "./database-clock.js";
import { isDuplicateKey } from "./errors.js";
import { HeldLease, LeaseFields } from "./lease.js";

/**
 * Upgrades of stored shapes (docs/decisions.md, "Migrations"): each change of how a collection's
 * documents or indexes look is a numbered migration, run once per database, in order, and
 * recorded in the `migrations` collection. Every process runs the list at start (and
 * `deskline-server migrate` runs it alone); a lock document keeps two starting processes from
 * running one migration twice. The lock is a lease (platform/database/lease.ts), not a
 * transaction (the embedded fallback has none): one document whose `expires_at` its holder moves
 * on while it works, so a process that died holding it lets go by itself. A migration must therefore be safe to run again from where
 * a dead holder left off: each is written as "bring the documents that are still in the old shape
 * into the new one".
 */

export interface Migration {
  /** Its number, in the order they run; never reused. */
  id: number;
  /** What it does, in a few words (kebab-case): the record's `_id` is `NNN-name`. */
  name: string;
  up(db: Db, logger: Logger): Promise<void>;
}

/** One applied migration, as recorded. */
export interface MigrationRecord {
  _id: string;
  id: number;
  name: string;
  applied_at: Date;
  duration_ms: number;
}

interface LockDoc {
  _id: string;
  holder: string;
  expires_at: Date;
}

export const MIGRATIONS_COLLECTION = "migrations";
const LOCKS_COLLECTION = "migration_lock";
const LOCK_ID = "migrations";

export interface MigrateOptions {
  logger: Logger;
  /** How long the lock is held without a renewal (a dead holder's lock is taken over after it). */
  leaseMs?: number;
  /** How often a process waiting for the lock looks again. */
  pollMs?: number;
  /** What the lock's lease is timed by; without one, the database's time, read for the run. */
  clock?: Clock;
}

/** What a run did: the migrations it applied (others may have been applied by another process). */
export interface MigrateReport {
  applied: string[];
  /** Recorded in the database but unknown to this version (a newer one ran them). */
  unknown: string[];
}

export const migrationKey = (migration: Pick<Migration, "id" | "name">): string =>
  `${String(migration.id).padStart(3, "0")}-${migration.name}`;

/**
 * Runs the migrations the database has not recorded yet, in order, under the lock. When every
 * one is recorded already (every start but the first after an upgrade) it takes no lock.
 */
export async function runMigrations(
  db: Db,
  migrations: readonly Migration[],
  options: MigrateOptions,
): Promise<MigrateReport> {
  checkNumbering(migrations);
  const records = db.collection<MigrationRecord>(MIGRATIONS_COLLECTION);
  const unknown = unknownRecords(await appliedKeys(records), migrations);
  if (unknown.length > 0) {
    // An older version started on a newer database (a rollback): it reads what it knows.
    options.logger.warn(
      { unknown },
      "the database has migrations this version does not know (a newer one ran)",
    );
  }
  if ((await pending(records, migrations)).length === 0) return { applied: [], unknown };
  const databaseClock = options.clock ? undefined : new DatabaseClock(db);
  await databaseClock?.start();
  try {
    const lock = await takeLock(db, options.clock ?? (databaseClock as DatabaseClock), options);
    return { applied: await applyPending(db, migrations, lock, options.logger), unknown };
  } finally {
    databaseClock?.stop();
  }
}

/** Under the lock: applies and records, in order, the migrations not recorded yet; then lets go. */
async function applyPending(
  db: Db,
  migrations: readonly Migration[],
  lock: HeldLock,
  logger: Logger,
): Promise<string[]> {
  const records = db.collection<MigrationRecord>(MIGRATIONS_COLLECTION);
  const applied: string[] = [];
  try {
    // Read again under the lock: the process that held it before may have run them all.
    for (const migration of await pending(records, migrations)) {
      lock.check();
      const key = migrationKey(migration);
      const started = Date.now();
      logger.info({ migration: key }, "migrating");
      await migration.up(db, logger);
      lock.check();
      await records.insertOne({
        _id: key,
        id: migration.id,
        name: migration.name,
        applied_at: new Date(),
        duration_ms: Date.now() - started,
      });
      logger.info({ migration: key, ms: Date.now() - started }, "migrated");
      applied.push(key);
    }
  } finally {
    await lock.release();
  }
  return applied;
}

function checkNumbering(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.id !== index + 1) {
      throw new Error(
        `migration ${migrationKey(migration)} is listed at position ${index + 1}: number them 1, 2, 3…`,
      );
    }
  });
}

async function appliedKeys(records: Collection<MigrationRecord>): Promise<Set<string>> {
  const docs = await records.find({}, { projection: { _id: 1 } }).toArray();
  return new Set(docs.map((doc) => doc._id));
}

function unknownRecords(applied: Set<string>, migrations: readonly Migration[]): string[] {
  const known = new Set(migrations.map(migrationKey));
  return [...applied].filter((key) => !known.has(key)).sort();
}

async function pending(
  records: Collection<MigrationRecord>,
  migrations: readonly Migration[],
): Promise<Migration[]> {
  const applied = await appliedKeys(records);
  return migrations.filter((migration) => !applied.has(migrationKey(migration)));
}

interface HeldLock {
  /** Throws when the lease was lost (renewals failed for longer than it lasts). */
  check(): void;
  release(): Promise<void>;
}

/** The lock's lease, on its one document (platform/database/lease.ts). */
const LOCK = new LeaseFields("holder", "expires_at");

/**
 * Takes the lock, waiting while another live process holds it. Taking it is one conditional
 * upsert: it matches the lock document only once its lease has expired, and when the document
 * exists but does not match, the upsert's insert collides with its `_id`: someone holds it.
 * The lease is on the database's time, so a starting process whose clock runs ahead does not
 * find a live holder's lock expired.
 */
async function takeLock(db: Db, clock: Clock, options: MigrateOptions): Promise<HeldLock> {
  const leaseMs = options.leaseMs ?? 60_000;
  const locks = db.collection<LockDoc>(LOCKS_COLLECTION);
  const holder = randomUUID();
  let waiting = false;
  for (;;) {
    const asked = performance.now();
    try {
      const now = dateOf(clock);
      await locks.updateOne(
        { _id: LOCK_ID, ...LOCK.free(now) },
        { $set: LOCK.take(holder, now, leaseMs) },
        { upsert: true },
      );
      return renewing(locks, { holder, clock, lease: new HeldLease(asked, leaseMs), leaseMs });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    if (!waiting) options.logger.info("another process is migrating the database; waiting for it");
    waiting = true;
    await sleep(options.pollMs ?? 250);
  }
}

/** Keeps the lease alive while the migrations run; `check` says whether it still is. */
function renewing(
  locks: Collection<LockDoc>,
  { holder, clock, lease, leaseMs }: { holder: string; clock: Clock; lease: HeldLease; leaseMs: number },
): HeldLock {
  const renew = async () => {
    const asked = performance.now();
    const { matchedCount } = await locks.updateOne(
      { _id: LOCK_ID, ...LOCK.heldBy(holder) },
      { $max: LOCK.extend(dateOf(clock), leaseMs) },
    );
    if (matchedCount === 1) lease.renewed(asked);
  };
  const timer = setInterval(() => void renew().catch(() => {}), Math.max(leaseMs / 3, 10)).unref();
  return {
    check() {
      if (!lease.hasRoom()) throw new Error("lost the migration lock (the database stopped answering?)");
    },
    async release() {
      clearInterval(timer);
      await locks.deleteOne({ _id: LOCK_ID, ...LOCK.heldBy(holder) });
    },
  };
}

/** Drops an index by name if the collection has it (a database that never had it, or a new one, has not). */
export async function dropIndexIfPresent(db: Db, collection: string, name: string): Promise<boolean> {
  const indexes = await db
    .collection(collection)
    .listIndexes()
    .toArray()
    .catch((error: unknown) => {
      // The collection does not exist (yet): nothing to drop.
      if ((error as { code?: number }).code === 26) return [];
      throw error;
    });
  if (!indexes.some((index) => index.name === name)) return false;
  await db.collection(collection).dropIndex(name);
  return true;
}

/**
 * Replaces indexes of `collection` by one: the new one is built first, then those named in
 * `retired` are dropped, so a rule they enforced (a unique one) holds throughout while servers
 * keep writing.
 */
export async function replaceIndexes(
  db: Db,
  collection: string,
  index: { key: IndexSpecification; options: CreateIndexesOptions & { name: string } },
  retired: readonly string[],
): Promise<void> {
  await db.collection(collection).createIndex(index.key, index.options);
  for (const name of retired) await dropIndexIfPresent(db, collection, name);
}

/**
 * Runs `update` on the documents `find` matches, a thousand at a time, until none is left: the
 * shape of most data migrations ("bring what is still old into the new shape"). `update` must
 * make each document stop matching, or this never ends.
 */
export async function rewriteInBatches<T extends { _id: string }>(
  collection: Collection<T>,
  find: Parameters<Collection<T>["find"]>[0],
  update: (docs: T[]) => Promise<void>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const docs = (await collection.find(find, { limit: 1000 }).toArray()) as T[];
    if (docs.length === 0) return total;
    await update(docs);
    total += docs.length;
  }
}
