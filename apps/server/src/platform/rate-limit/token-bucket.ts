/**
 * The token bucket (docs/design.md, API conventions) as arithmetic on one number, so that a shared bucket is one
 * field in MongoDB updated by plain `$set`/`$inc` (no aggregation-pipeline update, which
 * mongo-java-server lacks). This is GCRA (the generic cell rate algorithm): a bucket is its
 * theoretical arrival time `tat`, the moment it would be full again. At `now` it holds
 * `burst - max(0, tat - now) / interval` tokens; taking one moves `tat` to
 * `max(tat, now) + interval`. `tat` only ever grows, so any value once read is a lower bound of
 * the current one: a bucket that was empty by it is empty still.
 *
 * Times are whole microseconds (epoch µs stay below 2^53): exact arithmetic, and a stored `tat`
 * that compares right on mongo-java-server, which compares a fractional double against a whole
 * number as if it were whole (1795616566214.004 > 1795616566214 is false there).
 */

export interface BucketRule {
  /** Tokens back per second (RATE_LIMIT_PER_SECOND). */
  perSecond: number;
  /** The most tokens a bucket holds (RATE_LIMIT_BURST). */
  burst: number;
}

/** A clock's milliseconds as the whole microseconds the bucket counts in. */
export const micros = (ms: number): number => Math.round(ms * 1000);

/**
 * Microseconds one token takes to come back, rounded (3/s refills every 333,333 µs, 0.0001 %
 * fast); at least 1.
 */
export const intervalOf = (rule: BucketRule): number => Math.max(1, Math.round(1_000_000 / rule.perSecond));

/** Tokens in the bucket at `now` (fractional; at most `burst`). A bucket never seen is full. */
export function tokensAt(rule: BucketRule, tat: number | undefined, now: number): number {
  return rule.burst - Math.max(0, (tat ?? now) - now) / intervalOf(rule);
}

/**
 * How many of `wanted` tokens the bucket gives at `now`, and its `tat` once they are taken.
 * Tokens are whole: a request takes one or waits.
 */
export function take(
  rule: BucketRule,
  tat: number | undefined,
  now: number,
  wanted: number,
): { granted: number; tat: number } {
  const from = Math.max(tat ?? now, now);
  const available = Math.max(0, Math.floor(tokensAt(rule, from, now)));
  const granted = Math.min(wanted, available);
  return { granted, tat: from + granted * intervalOf(rule) };
}

/** The `RateLimit-*` headers (IETF draft) of a bucket whose `tat` is this at `now`. */
export function limitHeaders(rule: BucketRule, tat: number, now: number): Record<string, string> {
  const tokens = tokensAt(rule, tat, now);
  return {
    "RateLimit-Limit": String(rule.burst),
    "RateLimit-Remaining": String(Math.max(0, Math.floor(tokens))),
    // Seconds until the bucket is full again.
    "RateLimit-Reset": String(Math.ceil(Math.max(0, tat - now) / 1_000_000)),
  };
}

/** Whole seconds until the bucket holds one token again (at least 1): the 429's `Retry-After`. */
export function retryAfterSeconds(rule: BucketRule, tat: number, now: number): number {
  return Math.max(1, Math.ceil(((1 - tokensAt(rule, tat, now)) * intervalOf(rule)) / 1_000_000));
}
