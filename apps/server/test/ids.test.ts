import { describe, expect, it } from "vitest";
import { newId } from "../src/platform/ids.js";

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
});
