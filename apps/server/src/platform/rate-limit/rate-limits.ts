import type { Collection, Db } from "mongodb";
import { type Clock, systemClock } from "../clock.js";
import { isDuplicateKey } from "../database/errors.js";
import { type BucketRule, intervalOf, micros, take } from "./token-bucket.js";

/**
 * The API keys' token buckets, shared by every API process (docs/decisions.md, "Server"): one document per key,
 * `{_id: <key id>, tat}`, where `tat` is the bucket's theoretical arrival time in whole epoch
 * microseconds (platform/rate-limit/token-bucket.ts). Each take is one conditional single-document update,
 * `$set` or `$inc` under a filter on `tat`, which MongoDB and mongo-java-server both do
 * atomically; no aggregation-pipeline update, no transaction.
 */
export interface BucketDoc {
  _id: string;
  tat: number;
}

/** Rounds of read-and-retry before a batch that keeps losing races is refused (see `take`). */
const ROUNDS = 4;

export class RateLimits {
  readonly collection: Collection<BucketDoc>;
  constructor(
    db: Db,
    /**
     * What the sweep calls full by: the clock the takes run on (the database's in a server), or a
     * host ahead of it would drop buckets still drawn down and hand their keys a fresh burst.
     */
    private readonly clock: Clock = systemClock,
  ) {
    this.collection = db.collection<BucketDoc>("rate_limits");
  }

  /**
   * Takes up to `wanted` tokens from key `id`'s bucket at `now`; returns how many it got and the
   * bucket's `tat` after. `known` is a `tat` read before (a lower bound, or `now` when none): the
   * first update assumes it, and only a bucket that moved meanwhile costs a read and another
   * round. A bucket at or before `now` is full, so the update sets `tat` outright (upserting the
   * first document of a key); one ahead of `now` is drawn down by `$inc`, filtered on there
   * being enough tokens for all `wanted`.
   */
  async take(
    id: string,
    rule: BucketRule,
    now: number,
    wanted: number,
    known: number = now,
  ): Promise<{ granted: number; tat: number }> {
    let tat = known;
    for (let round = 0; round < ROUNDS; round++) {
      const plan = take(rule, tat, now, wanted);
      if (plan.granted === 0) return plan;
      if (tat <= now) {
        try {
          const set = await this.collection.findOneAndUpdate(
            { _id: id, tat: { $lte: now } },
            { $set: { tat: plan.tat } },
            { upsert: true, returnDocument: "after" },
          );
          if (set) return { granted: plan.granted, tat: set.tat };
        } catch (error) {
          // The document exists and is ahead of `now`: another process took tokens first.
          if (!isDuplicateKey(error)) throw error;
        }
      } else {
        const step = plan.granted * intervalOf(rule);
        const drawn = await this.collection.findOneAndUpdate(
          { _id: id, tat: { $gt: now, $lte: now + rule.burst * intervalOf(rule) - step } },
          { $inc: { tat: step } },
          { returnDocument: "after" },
        );
        if (drawn) return { granted: plan.granted, tat: drawn.tat };
      }
      tat = (await this.collection.findOne({ _id: id }))?.tat ?? now;
    }
    // Lost every round to other processes drawing the same bucket: it is busy at its limit, so
    // refusing this batch errs on the side of the limit.
    return { granted: 0, tat };
  }

  /** Full buckets carry no state: drops those full by `now` (µs; the hourly sweep, no TTL indexes). */
  async sweep(now: number = micros(this.clock.now())): Promise<number> {
    return (await this.collection.deleteMany({ tat: { $lte: now } })).deletedCount;
  }
}
