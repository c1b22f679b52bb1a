import { describe, expect, it } from "vitest";
import { gathered } from "../src/platform/database/gather.js";

// Table tests of the group commit that the shared rate limiter's database takes go through.

describe("gathered (group commit of database calls)", () => {
  /** A `run` that records its batches and answers when told to. */
  function recorder() {
    const batches: number[][] = [];
    const release: Array<() => void> = [];
    const run = async (inputs: number[]) => {
      batches.push(inputs);
      await new Promise<void>((done) => release.push(done));
      return inputs.map((n) => (n < 0 ? new Error(`negative ${n}`) : n * 10));
    };
    return { batches, release: () => release.shift()?.(), run };
  }
  const tick = () => new Promise((done) => setImmediate(done));

  it("runs a lone call at once, and gathers the calls made meanwhile into the next batch, in order", async () => {
    const r = recorder();
    const call = gathered(r.run);
    const first = call(1);
    expect(r.batches).toEqual([[1]]);
    const later = [call(2), call(3), call(4)];
    await tick();
    expect(r.batches).toEqual([[1]]); // nothing joins the batch in flight
    r.release();
    expect(await first).toBe(10);
    await tick();
    expect(r.batches).toEqual([[1], [2, 3, 4]]);
    r.release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it("fails only the caller whose outcome is an Error, and the whole batch when run throws", async () => {
    const r = recorder();
    const call = gathered(r.run);
    const ok = call(1);
    const bad = call(-1);
    r.release();
    await ok;
    await tick();
    r.release();
    await expect(bad).rejects.toThrow("negative -1");
    const throwing = gathered(async (_inputs: number[]): Promise<number[]> => {
      throw new Error("database down");
    });
    const both = [throwing(1), throwing(2)];
    await expect(both[0]).rejects.toThrow("database down");
    await expect(both[1]).rejects.toThrow("database down");
    // A failed batch leaves the gatherer working.
    const after = gathered(async (inputs: number[]) => inputs.map((n) => n + 1));
    expect(await after(1)).toBe(2);
  });

  it("splits what gathered into batches of at most maxBatch", async () => {
    const r = recorder();
    const call = gathered(r.run, 2);
    const calls = [call(1), call(2), call(3), call(4), call(5)];
    for (let i = 0; i < 3; i++) {
      await tick();
      r.release();
    }
    expect(await Promise.all(calls)).toEqual([10, 20, 30, 40, 50]);
    expect(r.batches).toEqual([[1], [2, 3], [4, 5]]);
  });
});
