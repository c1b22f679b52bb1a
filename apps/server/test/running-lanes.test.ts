import { describe, expect, it } from "vitest";
import { RunningLanes } from "../src/webhooks/delivery/running-lanes.js";

// The lanes running in a process, and how a lane whose batch came up short waits for more: news
// of a delivery queued in the same process ends the wait at once, a read finds one queued by
// another process, and a stop ends every wait.

const never = async () => false;
const linger = { maxMs: 200, checkEveryMs: 20, due: never };

describe("running lanes: news of queued deliveries", () => {
  it("hands a running lane the news of its deliveries and the others back for Agenda", async () => {
    const lanes = new RunningLanes();
    let heard: boolean | undefined;
    const run = lanes.run("ep_a", async (lane) => {
      heard = await lane.linger(Date.now() + 5_000, { ...linger, maxMs: 5_000 });
    });
    const elsewhere = lanes.notify(
      new Map([
        ["ep_a", 1],
        ["ep_b", 2],
      ]),
    );
    expect([...elsewhere]).toEqual([["ep_b", 2]]);
    const started = Date.now();
    await run;
    expect(heard).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Ended: its endpoint's deliveries go through Agenda again.
    expect(lanes.size).toBe(0);
    expect([...lanes.notify(new Map([["ep_a", 1]]))]).toEqual([["ep_a", 1]]);
  });

  it("keeps news that came while the lane was busy for its next wait", async () => {
    const lanes = new RunningLanes();
    const results = await lanes.run("ep_a", async (lane) => {
      lanes.notify(new Map([["ep_a", 1]]));
      const first = await lane.linger(Date.now() + 1_000, linger);
      const second = await lane.linger(Date.now() + 1_000, { ...linger, maxMs: 50 });
      return [first, second];
    });
    expect(results).toEqual([true, false]);
  });
});

describe("running lanes: how long a wait lasts", () => {
  it("gives up after maxMs, and never waits past the lane's yield time", async () => {
    const lanes = new RunningLanes();
    const waited = await lanes.run("ep_a", async (lane) => {
      const t0 = Date.now();
      const byMax = await lane.linger(t0 + 10_000, { ...linger, maxMs: 100 });
      const t1 = Date.now();
      const byYield = await lane.linger(t1 + 60, { ...linger, maxMs: 10_000 });
      return { byMax, byYield, maxMs: t1 - t0, yieldMs: Date.now() - t1 };
    });
    expect(waited.byMax).toBe(false);
    expect(waited.byYield).toBe(false);
    expect(waited.maxMs).toBeGreaterThanOrEqual(95);
    expect(waited.yieldMs).toBeGreaterThanOrEqual(55);
    expect(waited.yieldMs).toBeLessThan(5_000);
  });

  it("reads every checkEveryMs for work another process queued", async () => {
    const lanes = new RunningLanes();
    let reads = 0;
    const found = await lanes.run("ep_a", (lane) =>
      lane.linger(Date.now() + 5_000, {
        maxMs: 5_000,
        checkEveryMs: 10,
        due: async () => ++reads === 3,
      }),
    );
    expect(found).toBe(true);
    expect(reads).toBe(3);
  });

  it("ends every wait when the process stops, and says when the lanes have ended", async () => {
    const lanes = new RunningLanes();
    const outcomes: boolean[] = [];
    const runs = ["ep_a", "ep_b"].map((id) =>
      lanes.run(id, async (lane) => {
        outcomes.push(await lane.linger(Date.now() + 60_000, { ...linger, maxMs: 60_000 }));
        // A stopped lane waits no more.
        outcomes.push(await lane.linger(Date.now() + 60_000, { ...linger, maxMs: 60_000 }));
      }),
    );
    const started = Date.now();
    await lanes.drain();
    await Promise.all(runs);
    expect(outcomes).toEqual([false, false, false, false]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lanes.size).toBe(0);
  });
});
