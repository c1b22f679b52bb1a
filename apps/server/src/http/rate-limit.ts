import type { Context, Next } from "koa";
import { AppError } from "../errors.js";
import { apiKeyOf } from "./auth.js";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Token bucket per API key (DESIGN.md §3), in this process's memory: with several API processes
 * each enforces the limit on its own share of traffic. `RateLimit-*` headers follow the IETF
 * draft; `RateLimit-Reset` is the seconds until the bucket is full again.
 */
export function rateLimit(perSecond: number, burst: number, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();
  return async (ctx: Context, next: Next) => {
    if (perSecond <= 0) return next();
    const id = apiKeyOf(ctx).id;
    const time = now();
    const bucket = buckets.get(id) ?? { tokens: burst, updatedAt: time };
    bucket.tokens = Math.min(burst, bucket.tokens + ((time - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = time;
    buckets.set(id, bucket);
    if (buckets.size > 10_000) evictFull(buckets, burst);

    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    ctx.set({
      "RateLimit-Limit": String(burst),
      "RateLimit-Remaining": String(Math.floor(bucket.tokens)),
      "RateLimit-Reset": String(Math.ceil((burst - bucket.tokens) / perSecond)),
    });
    if (!allowed) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
      throw new AppError(429, "rate_limited", `Too many requests; retry after ${retryAfter} s.`, undefined, {
        "Retry-After": String(retryAfter),
        "RateLimit-Limit": String(burst),
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": String(retryAfter),
      });
    }
    await next();
  };
}

/** Full buckets carry no state worth keeping; dropping them bounds memory. */
function evictFull(buckets: Map<string, Bucket>, burst: number): void {
  for (const [id, bucket] of buckets) if (bucket.tokens >= burst) buckets.delete(id);
}
