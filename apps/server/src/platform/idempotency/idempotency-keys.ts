import { randomUUID } from "node:crypto";
import type { Collection, Db } from "mongodb";
import { deleteInBatches } from "../database/batch-delete.js";
import { isDuplicateKey } from "../database/errors.js";
import { newIdBlock } from "../ids.js";
import { escapeRegex } from "../regex.js";

/**
 * Fields of a stored answer that must not be kept as they were answered (docs/decisions.md "Keys
 * and secrets in stored answers"). The caller names them and says how each is kept: this store
 * only applies it to the top-level fields of an answer's body, bound to the record (the
 * workspace and the Idempotency-Key, `replayContext`).
 */
export interface AnswerSealing {
  /** Top-level fields of an answer's body to seal when they hold a string. */
  readonly fields: readonly string[];
  /**
   * What to store for `value` of `field`, bound to `context`; undefined leaves the field out of
   * the stored answer, whose replay is then refused (`withheld`).
   */
  seal(value: string, field: string, context: string): string | undefined;
  /** A value stored by `seal`, opened for a replay. */
  open(stored: string, context: string): string;
}

/** Keeps every answer as it was (a store told of no sealed fields). */
const KEPT_AS_ANSWERED: AnswerSealing = { fields: [], seal: (value) => value, open: (stored) => stored };

/** What a sealed field of a stored answer is bound to: it opens in this record only. */
export const replayContext = (id: string) => `idempotency:${id}`;

function mapSealed(
  response: StoredResponse,
  fields: readonly string[],
  map: (value: string, field: string) => string | undefined,
) {
  const body = response.body as Record<string, unknown> | null;
  if (!body || typeof body !== "object" || Array.isArray(body)) return response;
  const present = fields.filter((field) => typeof body[field] === "string");
  if (present.length === 0) return response;
  const next: Record<string, unknown> = { ...body };
  const withheld: string[] = [];
  for (const field of present) {
    const value = map(body[field] as string, field);
    if (value === undefined) {
      delete next[field];
      withheld.push(field);
    } else next[field] = value;
  }
  return { ...response, body: next, ...(withheld.length ? { withheld } : {}) };
}

export interface StoredResponse {
  status: number;
  body: unknown;
  /** Fields of the answer not kept (`AnswerSealing.seal` left them out): it cannot be replayed. */
  withheld?: string[];
  /** What the refused replay tells the caller to do instead (from the operation: `Unkept`). */
  advice?: string;
  /** Its body was erased with the personal data it carried (`eraseAnswers`): it is never replayed. */
  erased?: true;
}

/**
 * Top-level fields an operation's answer never keeps for a replay, sealed or not (a one-time
 * console link: docs/decisions.md "Keys and secrets in stored answers"), and what to tell a
 * caller whose replay is then refused.
 */
export interface Unkept {
  fields: readonly string[];
  advice: string;
}

export interface IdempotencyDoc {
  /** `<workspace>:<key>`: the key is scoped to the workspace. */
  _id: string;
  fingerprint: string;
  /**
   * Who made the first request (an API key's id, `cs_…` for a console session, `admin`):
   * only it is answered a replay (docs/decisions.md "Replays answer their caller only"). Absent
   * on records written before callers were kept, which any caller of the workspace may replay.
   */
  caller?: string;
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
  /**
   * The request's block of the process's id order (platform/ids.ts `newIdBlock`), taken by the
   * first run and kept by a takeover: its ids sort where the request started. Absent on a key
   * reserved before blocks were kept: its ids come from `seed`.
   */
  id_block?: string;
  response: StoredResponse | null;
  created_at: Date;
  /** Until when the record is kept; a sweep removes it afterwards (no TTL indexes: docs/design.md, Database). */
  expires_at: Date;
  /** While in flight: when the lock is considered abandoned (the process died mid-request). */
  lock_expires_at: Date;
}

export type Reservation =
  | { outcome: "reserved"; owner: string; seed: string; block?: string; firstRunAt: Date }
  | { outcome: "replay"; response: StoredResponse }
  | { outcome: "withheld"; response: StoredResponse }
  | { outcome: "in_flight" }
  | { outcome: "mismatch" }
  | { outcome: "other_caller" };

const LOCK_MS = 60_000;

export class IdempotencyKeys {
  readonly collection: Collection<IdempotencyDoc>;
  constructor(
    db: Db,
    private readonly ttlMs: number,
    /** The fields of answers kept sealed, and how (none without it). */
    readonly sealing: AnswerSealing = KEPT_AS_ANSWERED,
  ) {
    this.collection = db.collection<IdempotencyDoc>("idempotency_keys");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ expires_at: 1 }, { name: "expiry_sweep" });
  }

  /**
   * Takes the key for this request of `caller`, or says why not. Atomic through the unique `_id`.
   * Another caller's key is `other_caller` before anything else is compared: whether that key is
   * running, or was used with this body, is the other caller's business.
   */
  async reserve(id: string, fingerprint: string, now = new Date(), caller?: string): Promise<Reservation> {
    const owner = randomUUID();
    const block = newIdBlock(now.getTime());
    const lockExpiresAt = new Date(now.getTime() + LOCK_MS);
    for (;;) {
      try {
        await this.collection.insertOne({
          _id: id,
          fingerprint,
          ...(caller === undefined ? {} : { caller }),
          state: "in_flight",
          owner,
          seed: owner,
          id_block: block,
          response: null,
          created_at: now,
          expires_at: new Date(now.getTime() + this.ttlMs),
          lock_expires_at: lockExpiresAt,
        });
        return { outcome: "reserved", owner, seed: owner, block, firstRunAt: now };
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
      if (existing.caller !== undefined && existing.caller !== caller) return { outcome: "other_caller" };
      // Its fingerprint went with the answer (a hash of the erased body): the same request is refused.
      if (existing.response?.erased) return { outcome: "withheld", response: existing.response };
      if (existing.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (existing.state === "done" && existing.response) {
        if (existing.response.withheld?.length) return { outcome: "withheld", response: existing.response };
        const context = replayContext(id);
        return {
          outcome: "replay",
          response: mapSealed(existing.response, this.sealing.fields, (s) => this.sealing.open(s, context)),
        };
      }
      if (existing.lock_expires_at < now) {
        // The first request's process died mid-way: take the key over. The filter makes the
        // takeover atomic: of several requests racing for it, one matches.
        const taken = await this.collection.findOneAndUpdate(
          { _id: id, state: "in_flight", lock_expires_at: { $lt: now } },
          { $set: { owner, lock_expires_at: lockExpiresAt } },
        );
        if (taken) {
          const { seed, id_block: block, created_at: firstRunAt } = taken;
          return { outcome: "reserved", owner, seed, ...(block ? { block } : {}), firstRunAt };
        }
      }
      return { outcome: "in_flight" };
    }
  }

  /** Stores the response of the request that owns the key, without the fields `unkept` names. */
  async complete(id: string, owner: string, response: StoredResponse, unkept?: Unkept): Promise<void> {
    const context = replayContext(id);
    const never = unkept?.fields ?? [];
    const fields = [...new Set([...this.sealing.fields, ...never])];
    const sealed = mapSealed(response, fields, (s, field) =>
      never.includes(field) ? undefined : this.sealing.seal(s, field, context),
    );
    const stored = sealed.withheld && unkept ? { ...sealed, advice: unkept.advice } : sealed;
    await this.collection.updateOne(
      { _id: id, owner, state: "in_flight" },
      { $set: { state: "done", response: stored } },
    );
  }

  /**
   * Drops the stored answers of `scope` (a workspace) whose body `carries` names (a person's data
   * being erased: docs/decisions.md, "Erasure"), and the fingerprint hashed from the request's
   * body: the record stays, so the key still refuses a second run, and a replay is refused with
   * `advice`. Answers how many changed; a repeat changes none.
   */
  async eraseAnswers(scope: string, carries: (body: unknown) => boolean, advice: string): Promise<number> {
    const found = this.collection.find(
      { _id: { $regex: `^${escapeRegex(scope)}:` }, state: "done", "response.erased": { $exists: false } },
      { projection: { _id: 1, response: 1 } },
    );
    let erased = 0;
    for await (const { _id, response } of found) {
      if (!response || !carries(response.body)) continue;
      const kept: StoredResponse = {
        status: response.status,
        body: null,
        withheld: ["body"],
        advice,
        erased: true,
      };
      const { modifiedCount } = await this.collection.updateOne(
        { _id, state: "done" },
        { $set: { response: kept, fingerprint: "erased" } },
      );
      erased += modifiedCount;
    }
    return erased;
  }

  /** Forgets a key whose request failed on our side, so the client can retry it; owner only. */
  async release(id: string, owner: string): Promise<void> {
    await this.collection.deleteOne({ _id: id, owner, state: "in_flight" });
  }

  /** Removes the records expired by `now`, in batches; returns how many went. */
  sweep(now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, { expires_at: { $lt: now } });
  }
}
