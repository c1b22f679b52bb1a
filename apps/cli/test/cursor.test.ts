// The listener's cursor rules, as a table: what is forwarded, what counts as handled, how far back
// late events are still found, and what a state file may hold.
import { describe, expect, it } from "vitest";
import {
  type Cursor,
  createdAfter,
  cursorFrom,
  isPending,
  LOOKBACK_SECONDS,
  markHandled,
  parseCursor,
} from "../src/listen/cursor.js";

const T = 1_800_000_000;
const event = (id: string, created: number) => ({ id, created });

describe("cursor", () => {
  it("forwards from its start on, each event once", () => {
    let cursor = cursorFrom(T);
    expect(isPending(cursor, event("evt_a", T - 1))).toBe(false);
    expect(isPending(cursor, event("evt_b", T))).toBe(true);
    cursor = markHandled(cursor, event("evt_b", T));
    expect(isPending(cursor, event("evt_b", T))).toBe(false);
    expect(isPending(cursor, event("evt_c", T + 5))).toBe(true);
  });

  it("still forwards an event relayed late, with an older id, within the look-back window", () => {
    let cursor = cursorFrom(T);
    cursor = markHandled(cursor, event("evt_2", T + 60));
    const late = event("evt_1", T + 30);
    expect(isPending(cursor, late)).toBe(true);
    expect(createdAfter(cursor)).toBeLessThan(late.created);
    cursor = markHandled(cursor, late);
    expect(isPending(cursor, late)).toBe(false);
  });

  it("reads the window behind the newest event, never before its start, with an exclusive bound", () => {
    const rows: [Cursor, number][] = [
      [cursorFrom(T), T - 1],
      [markHandled(cursorFrom(T), event("evt_a", T + 10)), T - 1],
      [markHandled(cursorFrom(T), event("evt_a", T + LOOKBACK_SECONDS + 50)), T + 49],
    ];
    for (const [cursor, after] of rows) expect(createdAfter(cursor)).toBe(after);
  });

  it("forgets ids that fell out of the window, and ignores events older than it", () => {
    let cursor = markHandled(cursorFrom(T), event("evt_old", T));
    cursor = markHandled(cursor, event("evt_new", T + LOOKBACK_SECONDS + 1));
    expect(Object.keys(cursor.seen)).toEqual(["evt_new"]);
    expect(cursor.floor).toBe(T + 1);
    expect(isPending(cursor, event("evt_old", T))).toBe(false);
    // Handling an event below the window changes nothing but the bookkeeping.
    expect(markHandled(cursor, event("evt_older", T - 10)).seen).toEqual(cursor.seen);
  });

  it("never moves back", () => {
    const cursor = markHandled(cursorFrom(T), event("evt_b", T + 100));
    const after = markHandled(cursor, event("evt_a", T + 10));
    expect(after.newest).toBe(T + 100);
    expect(after.floor).toBe(cursor.floor);
  });

  it("reads back only what it wrote", () => {
    const cursor = markHandled(cursorFrom(T), event("evt_a", T));
    expect(parseCursor(JSON.parse(JSON.stringify(cursor)))).toEqual(cursor);
    for (const bad of [
      null,
      1,
      {},
      { floor: T, newest: T },
      { floor: "x", newest: T, seen: {} },
      { floor: T, newest: T, seen: [] },
      { floor: T, newest: T, seen: { evt_a: "x" } },
    ]) {
      expect(parseCursor(bad)).toBeUndefined();
    }
  });
});
