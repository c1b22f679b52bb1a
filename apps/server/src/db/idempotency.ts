import type { Collection, Db } from "mongodb";
import { isDuplicateKey } from "./errors.js";

export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotencyDoc {
  /** `<workspace>:<key>`: the key is scoped to the workspace. */
  _id: string;
  fingerprint: string;
  state: "in_flight" | "done";
  response: StoredResponse | null;
  created_at: Date;
  /** Until when the record is kept; a sweep removes it afterwards (no TTL indexes, DESIGN.md §2). */
  expires_at: Date;
  /** While in flight: when the lock is considered abandoned (the process died mid-request). */
  lock_expires_at: Date;
}

export type Claim =
  | { outcome: "claimed" }
  | { outcome: "replay"; response: StoredResponse }
  | { outcome: "in_flight" }
  | { outcome: "mismatch" };

const LOCK_MS = 60_000;

export class IdempotencyKeys {
  private readonly collection: Collection<IdempotencyDoc>;
  constructor(
    db: Db,
    private readonly ttlMs: number,
  ) {
    this.collection = db.collection<IdempotencyDoc>("idempotency_keys");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ expires_at: 1 }, { name: "expiry_sweep" });
  }

  /** Takes the key for this request, or says why not. Atomic through the unique `_id`. */
  async claim(id: string, fingerprint: string, now = new Date()): Promise<Claim> {
    const doc: IdempotencyDoc = {
      _id: id,
      fingerprint,
      state: "in_flight",
      response: null,
      created_at: now,
      expires_at: new Date(now.getTime() + this.ttlMs),
      lock_expires_at: new Date(now.getTime() + LOCK_MS),
    };
    try {
      await this.collection.insertOne(doc);
      return { outcome: "claimed" };
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const existing = await this.collection.findOne({ _id: id });
    if (!existing) return this.claim(id, fingerprint, now); // swept or released in between
    if (existing.fingerprint !== fingerprint) return { outcome: "mismatch" };
    if (existing.state === "done" && existing.response)
      return { outcome: "replay", response: existing.response };
    if (existing.lock_expires_at.getTime() < now.getTime()) {
      // The first request's process died mid-way: take the lock over, once.
      const taken = await this.collection.updateOne(
        { _id: id, state: "in_flight", lock_expires_at: existing.lock_expires_at },
        { $set: { lock_expires_at: doc.lock_expires_at } },
      );
      if (taken.modifiedCount === 1) return { outcome: "claimed" };
    }
    return { outcome: "in_flight" };
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { state: "done", response } });
  }

  /** Forgets a key whose request failed on our side, so the client can retry it. */
  async release(id: string): Promise<void> {
    // By `_id` alone (FerretDB scans for compound filters); only the request that claimed the key
    // releases it, and only while it is in flight.
    await this.collection.deleteOne({ _id: id });
  }

  async sweep(now = new Date()): Promise<number> {
    const { deletedCount } = await this.collection.deleteMany({ expires_at: { $lt: now } });
    return deletedCount;
  }
}
