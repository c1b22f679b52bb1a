import { randomUUID } from "node:crypto";
import type { Collection, Db } from "mongodb";
import { isDuplicateKey } from "../database/errors.js";
import { SecretBox } from "../secret-box.js";

/**
 * A stored answer that carries a webhook signing secret (create and rotate) keeps it sealed when
 * SECRETS_ENCRYPTION_KEY is set, bound to its key's record (docs/decisions.md "Signing secrets at
 * rest"); without a key it is kept as answered, like the endpoint's own copy.
 */
export const replayContext = (id: string) => `idempotency:${id}`;

function withSecret(response: StoredResponse, map: (secret: string) => string): StoredResponse {
  const body = response.body as { secret?: unknown } | null;
  if (!body || typeof body !== "object" || typeof body.secret !== "string") return response;
  return { ...response, body: { ...body, secret: map(body.secret) } };
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotencyDoc {
  /** `<workspace>:<key>`: the key is scoped to the workspace. */
  _id: string;
  fingerprint: string;
  state: "in_flight" | "done";
  /**
   * The request running it (a random token): only it may complete or release the key, so one
   * that overran its lock cannot overwrite or free a key another request has taken over.
   */
  owner: string;
  /**
   * Random, chosen by the first run and kept by a takeover: the request's ids are derived from it
   * (platform/ids.ts `withReplayableIds`), so a run that takes over makes the ids the first one did.
   */
  seed: string;
  response: StoredResponse | null;
  created_at: Date;
  /** Until when the record is kept; a sweep removes it afterwards (no TTL indexes: docs/design.md, Database). */
  expires_at: Date;
  /** While in flight: when the lock is considered abandoned (the process died mid-request). */
  lock_expires_at: Date;
}

export type Claim =
  | { outcome: "claimed"; owner: string; seed: string; firstRunAt: Date }
  | { outcome: "replay"; response: StoredResponse }
  | { outcome: "in_flight" }
  | { outcome: "mismatch" };

const LOCK_MS = 60_000;

export class IdempotencyKeys {
  readonly collection: Collection<IdempotencyDoc>;
  constructor(
    db: Db,
    private readonly ttlMs: number,
    private readonly secretBox: SecretBox = new SecretBox(),
  ) {
    this.collection = db.collection<IdempotencyDoc>("idempotency_keys");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ expires_at: 1 }, { name: "expiry_sweep" });
  }

  /** Takes the key for this request, or says why not. Atomic through the unique `_id`. */
  async claim(id: string, fingerprint: string, now = new Date()): Promise<Claim> {
    const owner = randomUUID();
    const lockExpiresAt = new Date(now.getTime() + LOCK_MS);
    for (;;) {
      try {
        await this.collection.insertOne({
          _id: id,
          fingerprint,
          state: "in_flight",
          owner,
          seed: owner,
          response: null,
          created_at: now,
          expires_at: new Date(now.getTime() + this.ttlMs),
          lock_expires_at: lockExpiresAt,
        });
        return { outcome: "claimed", owner, seed: owner, firstRunAt: now };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const existing = await this.collection.findOne({ _id: id });
      if (!existing) continue; // released in between: try again
      if (existing.expires_at < now) {
        // Expired but not swept yet: as good as gone. Only that expired record is removed.
        await this.collection.deleteOne({ _id: id, expires_at: existing.expires_at });
        continue;
      }
      if (existing.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (existing.state === "done" && existing.response) {
        const context = replayContext(id);
        return {
          outcome: "replay",
          response: withSecret(existing.response, (s) => this.secretBox.open(s, context)),
        };
      }
      if (existing.lock_expires_at < now) {
        // The first request's process died mid-way: take the key over. The filter makes the
        // takeover atomic: of several requests racing for it, one matches.
        const taken = await this.collection.findOneAndUpdate(
          { _id: id, state: "in_flight", lock_expires_at: { $lt: now } },
          { $set: { owner, lock_expires_at: lockExpiresAt } },
        );
        if (taken) return { outcome: "claimed", owner, seed: taken.seed, firstRunAt: taken.created_at };
      }
      return { outcome: "in_flight" };
    }
  }

  /** Stores the response of the request that owns the key. */
  async complete(id: string, owner: string, response: StoredResponse): Promise<void> {
    const stored = withSecret(response, (s) => this.secretBox.seal(s, replayContext(id)));
    await this.collection.updateOne(
      { _id: id, owner, state: "in_flight" },
      { $set: { state: "done", response: stored } },
    );
  }

  /** Forgets a key whose request failed on our side, so the client can retry it; owner only. */
  async release(id: string, owner: string): Promise<void> {
    await this.collection.deleteOne({ _id: id, owner, state: "in_flight" });
  }

  async sweep(now = new Date()): Promise<number> {
    const { deletedCount } = await this.collection.deleteMany({ expires_at: { $lt: now } });
    return deletedCount;
  }
}
