import type { Context, Next } from "koa";
import { gathered } from "../database/gather.js";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { RateLimits } from "../rate-limit/rate-limits.js";
import {
  type BucketRule,
  intervalOf,
  limitHeaders,
  micros,
  retryAfterSeconds,
  take as takeFrom,
} from "../rate-limit/token-bucket.js";
import { apiKeyOf } from "./auth.js";

/**
 * Token bucket per API key (docs/design.md, API conventions). `RateLimit-*` headers follow the IETF draft;
 * `RateLimit-Reset` is the seconds until the bucket is full again. Where the buckets live is a
 * `Buckets`: in MongoDB, shared by every API process (the default), or in this
 * process's memory (RATE_LIMIT_SHARED=false).
 */

/** One request's token: granted or not, and the bucket's `tat` at `now` (µs, platform/rate-limit/token-bucket.ts). */
export interface Taken {
  allowed: boolean;
  tat: number;
  now: number;
}

export interface Buckets {
  take(id: string): Promise<Taken>;
}

export function rateLimit(rule: BucketRule, buckets: Buckets) {
  return async (ctx: Context, next: Next) => {
    if (rule.perSecond <= 0) return next();
    const { allowed, tat, now } = await buckets.take(apiKeyOf(ctx).id);
    const headers = limitHeaders(rule, tat, now);
    ctx.set(headers);
    if (!allowed) {
      const retryAfter = retryAfterSeconds(rule, tat, now);
      throw new AppError(429, "rate_limited", `Too many requests; retry after ${retryAfter} s.`, {
        headers: {
          ...headers,
          "Retry-After": String(retryAfter),
          "RateLimit-Remaining": "0",
          "RateLimit-Reset": String(retryAfter),
        },
      });
    }
    await next();
  };
}

/** Above this many keys, buckets known to be full are forgotten (they carry nothing). */
const MAX_KEYS = 10_000;

/** `tat` per key in a Map, bounded: full buckets are dropped when it grows past MAX_KEYS. */
class TatMap extends Map<string, number> {
  raise(id: string, tat: number, now: number): void {
    this.set(id, Math.max(this.get(id) ?? tat, tat));
    if (this.size > MAX_KEYS) for (const [key, value] of this) if (value <= now) this.delete(key);
  }
}

/** The buckets in this process's memory: with N API processes, a key gets N times the rate. */
export function memoryBuckets(rule: BucketRule, clock: () => number = Date.now): Buckets {
  const tats = new TatMap();
  return {
    async take(id) {
      const now = micros(clock());
      const { granted, tat } = takeFrom(rule, tats.get(id), now, 1);
      tats.raise(id, tat, now);
      return { allowed: granted === 1, tat, now };
    },
  };
}

/** How long the limiter stops asking an unreachable database before it tries again. */
const RETRY_DATABASE_MS = 1_000;

/**
 * The buckets in MongoDB (platform/rate-limit/rate-limits.ts), so a key gets its rate whatever the number of API
 * processes. Three things keep it near the in-memory limiter's speed:
 *
 * - Requests that arrive while a take is in flight are gathered (platform/database/gather.ts) and go to
 *   the database together, one update per key for all of that key's requests: under load a
 *   key's requests share round trips instead of queueing for the bucket one by one.
 * - Each process remembers the last `tat` it saw per key, a lower bound of the shared one: a
 *   bucket empty by it is empty for sure, so a flood over the limit is refused from memory
 *   without touching the database, and a full bucket's update needs no read first.
 * - With the database unreachable the limiter fails open: requests pass (the routes then answer
 *   503 `database_unavailable` as they always have), and for a second after a failure it does
 *   not wait on the database again, so a request is not held twice for the server-selection
 *   timeout.
 */
export function sharedBuckets(
  store: RateLimits,
  rule: BucketRule,
  clock: () => number,
  logger: Logger,
): Buckets {
  const known = new TatMap();
  // When the database last failed the limiter (performance.now()), until a take succeeds again.
  let failedAt: number | undefined;
  const open = (count: number, tat: number) => ({ granted: count, tat });
  const takeShared = async (id: string, now: number, count: number, before: number | undefined) => {
    if (failedAt !== undefined && performance.now() - failedAt < RETRY_DATABASE_MS) {
      return open(count, before ?? now);
    }
    try {
      const result = await store.take(id, rule, now, count, before);
      if (failedAt !== undefined) logger.info("rate limit store reachable again");
      failedAt = undefined;
      return result;
    } catch (error) {
      if (failedAt === undefined) logger.warn({ err: error }, "rate limit store unreachable; failing open");
      failedAt = performance.now();
      return open(count, before ?? now);
    }
  };
  const takeBatch = async (ids: string[]): Promise<Taken[]> => {
    const now = micros(clock());
    const wanted = new Map<string, number>();
    for (const id of ids) wanted.set(id, (wanted.get(id) ?? 0) + 1);
    const outcomes = new Map<string, Taken[]>();
    await Promise.all(
      [...wanted].map(async ([id, count]) => {
        const before = known.get(id);
        // Empty by what this process saw is empty for sure: no need to ask the database.
        const local = takeFrom(rule, before, now, count);
        const result = local.granted === 0 ? local : await takeShared(id, now, count, before);
        known.raise(id, result.tat, now);
        outcomes.set(id, tokensOf(rule, result, count, now));
      }),
    );
    return ids.map((id) => outcomes.get(id)?.shift() as Taken);
  };
  return { take: gathered(takeBatch, 1_000) };
}

/**
 * One outcome per request of a batch: the first `granted` pass, each with the bucket as it stood
 * after its own token; the rest are refused with the bucket as the batch left it.
 */
function tokensOf(
  rule: BucketRule,
  { granted, tat }: { granted: number; tat: number },
  count: number,
  now: number,
): Taken[] {
  const interval = intervalOf(rule);
  return Array.from({ length: count }, (_, i) =>
    i < granted
      ? { allowed: true, tat: tat - (granted - 1 - i) * interval, now }
      : { allowed: false, tat, now },
  );
}
