// The one sleep-and-retry loop: the waits each policy gives, and the ways a loop ends.
import { afterEach, describe, expect, it, vi } from "vitest";
import { AGAIN, type BackoffPolicy, giveUpAfter, retry } from "../src/platform/backoff.js";
import { CONTENDED_WRITE } from "../src/records/record.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The waits a loop of `failures` lost attempts makes, with Math.random answering `random`. */
async function waitsOf(policy: BackoffPolicy, failures: number, random = 0.5): Promise<number[]> {
  vi.spyOn(Math, "random").mockReturnValue(random);
  const waits: number[] = [];
  const realSetTimeout = globalThis.setTimeout;
  vi.spyOn(globalThis, "setTimeout").mockImplementation(((done: () => void, ms: number) => {
    waits.push(ms);
    return realSetTimeout(done, 0);
  }) as typeof setTimeout);
  await retry(policy, async (n) => (n > failures ? true : AGAIN));
  vi.restoreAllMocks();
  return waits;
}

describe("the waits of a policy", () => {
  it("grow by the factor up to the cap (the database reconnect); a fixed interval without one", async () => {
    expect(await waitsOf({ firstMs: 250, factor: 2, maxMs: 5000 }, 7)).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
    expect(await waitsOf({ firstMs: 200 }, 3)).toEqual([200, 200, 200]);
  });

  it("full jitter: a random point between 0 and the wait (contended writes: up to 1, 2, 4 … 50 ms)", async () => {
    expect(await waitsOf(CONTENDED_WRITE, 8, 1)).toEqual([1, 2, 4, 8, 16, 32, 50, 50]);
    expect(await waitsOf(CONTENDED_WRITE, 8, 0)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
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

  it("stops before the next attempt once the signal aborts, and does not retry what an attempt throws", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    let attempts = 0;
    const answer = await retry(
      { firstMs: 100 },
      async () => {
        attempts++;
        return AGAIN;
      },
      { signal: controller.signal },
    );
    expect([answer, attempts]).toEqual([undefined, 1]);
    await expect(
      retry({ firstMs: 1 }, async () => {
        throw new Error("not retried");
      }),
    ).rejects.toThrow("not retried");
  });
});
