/**
 * The token bucket of DESIGN.md §3 as arithmetic on one number, so that a shared bucket is one
 * field in MongoDB updated by plain `$set`/`$inc` (no aggregation-pipeline update, which
 * mongo-java-server lacks). This is GCRA (the generic cell rate algorithm): a bucket is its
 * theoretical arrival time `tat`, the moment it would be full again. At `now` it holds
 * `burst - max(0, tat - now) / interval` tokens; taking one moves `tat` to
 * `max(tat, now) + interval`. `tat` only ever grows, so any value once read is a lower bound of
 * the current one: a bucket that was empty by it is empty still.
 */

export interface BucketRule {
  /** Tokens back per second (RATE_LIMIT_PER_SECOND). */
  perSecond: number;
  /** The most tokens a bucket holds (RATE_LIMIT_BURST). */
  burst: number;
}

/** Floating-point slack: 2/s for 3 s must give exactly 6 tokens, not 5.999999. */
const SLACK = 1e-9;

/** Milliseconds one token takes to come back. */
export const intervalOf = (rule: BucketRule): number => 1000 / rule.perSecond;

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
  const available = Math.max(0, Math.floor(tokensAt(rule, from, now) + SLACK));
  const granted = Math.min(wanted, available);
  return { granted, tat: from + granted * intervalOf(rule) };
}

/** The `RateLimit-*` headers (IETF draft) of a bucket whose `tat` is this at `now`. */
export function limitHeaders(rule: BucketRule, tat: number, now: number): Record<string, string> {
  const tokens = tokensAt(rule, tat, now);
  return {
    "RateLimit-Limit": String(rule.burst),
    "RateLimit-Remaining": String(Math.max(0, Math.floor(tokens + SLACK))),
    // Seconds until the bucket is full again.
    "RateLimit-Reset": String(Math.max(0, Math.ceil(Math.max(0, tat - now) / 1000 - SLACK))),
  };
}

/** Whole seconds until the bucket holds one token again (at least 1): the 429's `Retry-After`. */
export function retryAfterSeconds(rule: BucketRule, tat: number, now: number): number {
  return Math.max(1, Math.ceil((1 - tokensAt(rule, tat, now)) / rule.perSecond - SLACK));
}
