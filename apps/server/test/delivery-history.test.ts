import { describe, expect, it } from "vitest";
import { readHistory, type Sent } from "./helpers/delivery-history.js";

// The reader the fault tests (delivery-faults.test.ts) judge delivery by: each figure on a
// history small enough to count by hand, so a passing fault test means what it says.

/** A request for `eventId` from `start` to `end` (ms), answered 200 unless `status` says otherwise. */
const sent = (eventId: string, start: number, end?: number, status: number | null = 200): Sent => ({
  eventId,
  startedAt: start,
  endedAt: end,
  inFlightAtStart: 1,
  status: status === null || end === undefined ? undefined : status,
});

const ORDER = ["e1", "e2", "e3"];

describe("readHistory", () => {
  it.each([
    ["in order, once each", [sent("e1", 0, 10), sent("e2", 10, 20), sent("e3", 20, 30)], {}],
    // Sent together, e2 reached the receiver first: no answer came before e1 started.
    ["a batch arriving out of order", [sent("e2", 0, 10), sent("e1", 1, 11), sent("e3", 20, 30)], {}],
  ])("%s: nothing to report", (_, history, options) => {
    expect(readHistory(history, ORDER, options)).toMatchObject({
      inversions: 0,
      resentLate: 0,
      duplicates: 0,
      missing: 0,
    });
  });

  it("an event first sent after a later one was answered is an inversion", () => {
    const history = [sent("e1", 0, 10), sent("e3", 10, 20), sent("e2", 30, 40)];
    expect(readHistory(history, ORDER).inversions).toBe(1);
  });

  it("an interrupted delivery may go twice, but before any later event goes", () => {
    const interrupted = new Set(["e1"]);
    const first = [sent("e1", 0, 5, null), sent("e1", 10, 20), sent("e2", 20, 30), sent("e3", 30, 40)];
    expect(readHistory(first, ORDER, { interrupted })).toMatchObject({ resentLate: 0, duplicates: 0 });
    const last = [sent("e1", 0, 5, null), sent("e2", 10, 20), sent("e3", 20, 30), sent("e1", 30, 40)];
    expect(readHistory(last, ORDER, { interrupted })).toMatchObject({ resentLate: 1, duplicates: 0 });
  });

  it("counts sends beyond the allowed as duplicates, and events never answered 2xx as missing", () => {
    const history = [sent("e1", 0, 10), sent("e1", 10, 20), sent("e2", 20, 30, 500), sent("e3", 30)];
    expect(readHistory(history, ORDER)).toMatchObject({ duplicates: 1, missing: 2 });
    expect(readHistory(history, ORDER, { sendsPerEvent: 2 }).duplicates).toBe(0);
  });

  it("takes the most in flight from the receiver's count, and the longest idle stretch after a time", () => {
    const history = [
      { ...sent("e1", 0, 100), inFlightAtStart: 1 },
      { ...sent("e2", 50, 120), inFlightAtStart: 2 },
      sent("e3", 3_120, 3_200),
    ];
    expect(readHistory(history, ORDER, { idleFrom: 60 })).toMatchObject({
      mostInFlight: 2,
      longestIdleMs: 3_000,
    });
    expect(readHistory(history, ORDER).longestIdleMs).toBeUndefined();
  });
});
