// The one sleep-and-retry loop: the waits each policy gives, and the ways a loop ends.
import { describe, expect, it } from "vitest";
import { AGAIN, backoffDelay, giveUpAfter, retry } from "../src/backoff.js";
import { CONTENDED_WRITE } from "../src/db/records.js";

describe("backoffDelay", () => {
  it("grows by the factor up to the cap; a fixed interval without one", () => {
    const policy = { firstMs: 250, factor: 2, maxMs: 5000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(policy, n))).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
    expect([1, 2, 9].map((n) => backoffDelay({ firstMs: 200 }, n))).toEqual([200, 200, 200]);
  });

  it("full jitter: a random point between 0 and the wait (contended writes: up to 1, 2, 4 … 50 ms)", () => {
    expect([1, 2, 3, 6, 7, 40].map((n) => backoffDelay(CONTENDED_WRITE, n, () => 1))).toEqual([
      1, 2, 4, 32, 50, 50,
    ]);
    expect(backoffDelay(CONTENDED_WRITE, 7, () => 0)).toBe(0);
    expect(backoffDelay(CONTENDED_WRITE, 7, () => 0.5)).toBe(25);
  });
});

describe("retry", () => {
  it("tries again until an attempt answers, numbering the attempts", async () => {
    const seen: number[] = [];
    const answer = await retry({ firstMs: 1 }, async (n) => {
      seen.push(n);
      return n < 3 ? AGAIN : `done at ${n}`;
    });
    expect(answer).toBe("done at 3");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("gives up at the deadline: with the caller's error, or with undefined", async () => {
    const started = Date.now();
    await expect(
      retry({ firstMs: 10 }, async () => AGAIN, { giveUp: giveUpAfter(60, () => new Error("too late")) }),
    ).rejects.toThrow("too late");
    expect(Date.now() - started).toBeGreaterThanOrEqual(60);
    await expect(
      retry({ firstMs: 10 }, async () => AGAIN, { giveUp: giveUpAfter(30) }),
    ).resolves.toBeUndefined();
  });

  it("stops while waiting when the signal aborts, and does not retry what an attempt throws", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    let attempts = 0;
    const started = Date.now();
    const answer = await retry(
      { firstMs: 10_000 },
      async () => {
        attempts++;
        return AGAIN;
      },
      { signal: controller.signal },
    );
    expect([answer, attempts]).toEqual([undefined, 1]);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(
      retry({ firstMs: 1 }, async () => {
        throw new Error("not retried");
      }),
    ).rejects.toThrow("not retried");
  });
});
