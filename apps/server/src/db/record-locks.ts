import { randomBytes } from "node:crypto";
import type { Collection, Db } from "mongodb";
import { isDuplicateKey } from "./errors.js";
import { concurrentUpdate } from "./records.js";

interface LockDoc {
  _id: string;
  token: string;
  acquired_at: Date;
}

// A holder runs one read-decide-write (milliseconds); one that died holding a lock frees it after this.
const ABANDONED_AFTER_MS = 10_000;
// How long a request waits for a busy record before answering 409 concurrent_update.
const WAIT_MS = 3_000;

/**
 * A short exclusive lock per record, for read-decide-write sequences that must not interleave
 * (the ticket status machine: two racing moves must not both pass from the same old status).
 *
 * Why not a conditional update (`updateOne({_id, version})`)? On MongoDB it is atomic, but on
 * FerretDB 1.24 — the embedded fallback the tests and CI run on — two such updates racing both
 * match (so do findOneAndUpdate and findOneAndDelete). Inserting a document whose `_id` is taken
 * fails on both databases, so a lock is that document (DESIGN.md §2's uniqueness trick).
 */
export class RecordLocks {
  private readonly collection: Collection<LockDoc>;

  constructor(db: Db) {
    this.collection = db.collection<LockDoc>("record_locks");
  }

  /** Runs `fn` while holding the lock on `id`; waits while someone else holds it. */
  async withLock<T>(id: string, noun: string, fn: () => Promise<T>): Promise<T> {
    const token = await this.acquire(id, noun);
    try {
      return await fn();
    } finally {
      // The token makes sure a holder that overran never frees a lock taken over from it.
      await this.collection.deleteOne({ _id: id, token });
    }
  }

  private async acquire(id: string, noun: string): Promise<string> {
    const token = randomBytes(12).toString("hex");
    const deadline = Date.now() + WAIT_MS;
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      try {
        await this.collection.insertOne({ _id: id, token, acquired_at: new Date() });
        return token;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const holder = await this.collection.findOne({ _id: id });
      if (holder && Date.now() - holder.acquired_at.getTime() > ABANDONED_AFTER_MS) {
        await this.collection.deleteOne({ _id: id, token: holder.token });
        continue;
      }
      if (Date.now() > deadline) throw concurrentUpdate(noun);
      await new Promise((done) => setTimeout(done, delay + Math.random() * delay));
    }
  }
}
