import { describe, expect, it } from "vitest";
import { CachedReads } from "../src/platform/cached-reads.js";

// The per-process read cache of API keys and custom field definitions (platform/cached-reads.ts):
// one read shared by concurrent callers, kept for its time, dropped by a change; and a drop while
// a read is in flight (a definition created while a write reads them) answers the new state, not
// an error: lru-cache rejects an aborted fetch, which concurrent requests (Schemathesis defining
// custom fields while it patched contacts) once turned into a 500.
describe("CachedReads", () => {
  const counter = () => {
    let state = 0;
    let reads = 0;
    let gate: Promise<void> = Promise.resolve();
    return {
      set: (value: number) => {
        state = value;
      },
      hold: () => {
        let open = () => {};
        gate = new Promise((resolve) => {
          open = resolve;
        });
        return open;
      },
      read: async () => {
        reads++;
        const seen = state;
        await gate;
        return seen;
      },
      reads: () => reads,
    };
  };

  it("shares one read between callers and keeps it until dropped", async () => {
    const source = counter();
    const cache = new CachedReads(source.read, { ttlMs: 60_000, max: 10 });
    expect(await Promise.all([cache.get("k"), cache.get("k")])).toEqual([0, 0]);
    expect(source.reads()).toBe(1);
    source.set(1);
    expect(await cache.get("k")).toBe(0);
    cache.drop("k");
    expect(await cache.get("k")).toBe(1);
  });

  it("answers the new state when dropped while a read is in flight", async () => {
    const source = counter();
    const cache = new CachedReads(source.read, { ttlMs: 60_000, max: 10 });
    const open = source.hold();
    const pending = cache.get("k");
    source.set(2);
    cache.drop("k");
    open();
    expect(await pending).toBe(2);
  });

  it("reads every time with ttlMs 0", async () => {
    const source = counter();
    const cache = new CachedReads(source.read, { ttlMs: 0, max: 10 });
    await cache.get("k");
    await cache.get("k");
    expect(source.reads()).toBe(2);
  });
});
