import { beforeAll, describe, expect, it, vi } from "vitest";

// A generator of its own: the module keeps the newest time it has made an id at, and files that
// share this worker (isolate: false) may have made ids at a time ahead of now (a test's clock
// moved on), which this file's "now" would then be backdated against.
let ids: typeof import("../src/platform/ids.js");
beforeAll(async () => {
  vi.resetModules();
  ids = await import("../src/platform/ids.js");
});
const newId = (...args: Parameters<typeof ids.newId>) => ids.newId(...args);
const newIdBlock = (...args: Parameters<typeof ids.newIdBlock>) => ids.newIdBlock(...args);
const childId = (...args: Parameters<typeof ids.childId>) => ids.childId(...args);
const withReplayableIds: typeof ids.withReplayableIds = (...args) => ids.withReplayableIds(...args);

describe("ids", () => {
  it("sort by the time made, even within one millisecond", () => {
    const now = Date.now();
    const ids = Array.from({ length: 50 }, () => newId("evt", now));
    expect([...ids].sort()).toEqual(ids);
    // A clock a few milliseconds back still makes later ids.
    expect(newId("evt", now - 5) > (ids.at(-1) as string)).toBe(true);
  });

  it("dated a day back, after newer ones were made, sort at their own time", () => {
    const current = newId("evt");
    const day = 86_400_000;
    const [older, old] = [newId("evt", Date.now() - 31 * day), newId("evt", Date.now() - 29 * day)];
    expect(older < old && old < current).toBe(true);
    expect(newId("evt") > current).toBe(true);
  });

  it("an idempotent request's ids sort where it started, among the process's, and are the same on a rerun", async () => {
    const now = Date.now();
    const before = newId("evt", now);
    const [first, second] = [newIdBlock(now), newIdBlock(now)];
    const after = newId("evt", now);
    const idsOf = (block: string) =>
      withReplayableIds({ block, seed: "unused", firstRunAt: now }, async () => [newId("evt"), newId("evt")]);
    const [a, b] = [await idsOf(first), await idsOf(second)];
    expect([before, ...a, ...b, after]).toEqual([before, ...a, ...b, after].sort());
    expect(await idsOf(first)).toEqual(a);
  });

  it("a child id sorts with its parent and is the same for the same seed", () => {
    const now = Date.now();
    const [early, late] = [newId("evt", now), newId("evt", now)];
    const children = ["we_b", "we_a", "we_c"].map((seed) => childId("dlv", late, seed));
    expect(new Set(children).size).toBe(3);
    expect(children.every((child) => child > childId("dlv", early, "we_z"))).toBe(true);
    expect(childId("dlv", late, "we_a")).toBe(children[1]);
  });
});
