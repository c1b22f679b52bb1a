import { describe, expect, it } from "vitest";
import {
  intervalOf,
  limitHeaders,
  retryAfterSeconds,
  take,
  tokensAt,
} from "../src/platform/rate-limit/token-bucket.js";

// The bucket arithmetic both limiters share (platform/rate-limit/token-bucket.ts), as a table. It counts in
// microseconds; the table says milliseconds.

const rule = { perSecond: 2, burst: 3 }; // one token back every 500 ms
const us = (ms: number | undefined) => (ms === undefined ? undefined : ms * 1000);

describe("token bucket (GCRA)", () => {
  it.each([
    // tat (undefined: never seen), now, wanted → granted, tat after
    [undefined, 1000, 1, 1, 1500],
    [undefined, 1000, 5, 3, 2500],
    [900, 1000, 1, 1, 1500], // full since 900: counts from now, not from the past
    [2500, 1000, 1, 0, 2500], // empty: 0 tokens until 1500
    [2500, 1499, 1, 0, 2500],
    [2500, 1500, 1, 1, 3000], // exactly one back
    [2500, 1500, 2, 1, 3000],
    [2000, 1000, 3, 1, 2500],
    [2500, 61_000, 4, 3, 62_500], // a long pause refills to the burst, never beyond
  ])("tat %s at %s, wanting %s: %s granted, tat %s", (tat, now, wanted, granted, after) => {
    expect(take(rule, us(tat), now * 1000, wanted)).toEqual({ granted, tat: after * 1000 });
  });

  it("stays exact over many thirds of a second", () => {
    const third = { perSecond: 3, burst: 3 };
    let tat: number | undefined;
    let granted = 0;
    for (let now = 0; now <= 10_000_000; now += 50_000) {
      const step = take(third, tat, now, 10);
      granted += step.granted;
      tat = step.tat;
    }
    // The burst at 0, then 3 a second for 10 s.
    expect(granted).toBe(3 + 30);
  });

  it("tells the headers and Retry-After", () => {
    expect(intervalOf({ perSecond: 3, burst: 1 })).toBe(333_333);
    expect(intervalOf({ perSecond: 10_000_000, burst: 1 })).toBe(1);
    expect(tokensAt(rule, undefined, 5)).toBe(3);
    expect(limitHeaders(rule, 1_500_000, 1_000_000)).toEqual({
      "RateLimit-Limit": "3",
      "RateLimit-Remaining": "2",
      "RateLimit-Reset": "1",
    });
    expect(limitHeaders(rule, 2_500_000, 1_000_000)).toMatchObject({
      "RateLimit-Remaining": "0",
      "RateLimit-Reset": "2",
    });
    expect(retryAfterSeconds(rule, 2_500_000, 1_000_000)).toBe(1);
    expect(retryAfterSeconds({ perSecond: 1, burst: 1 }, 4_000_000, 1_000_000)).toBe(3);
  });
});
