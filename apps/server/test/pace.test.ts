import { describe, expect, it } from "vitest";
import { retryAfter } from "../src/webhooks/delivery/http-client.js";
import { Pace } from "../src/webhooks/delivery/pace.js";

describe("Pace", () => {
  it("books sends an interval apart, from no sooner than the lane's start", () => {
    const pace = new Pace(4, 1_000);
    expect([pace.book(0), pace.book(0), pace.book(900), pace.book(2_000)]).toEqual([
      1_000, 1_250, 1_500, 2_000,
    ]);
    expect(pace.nextAt).toBe(2_250);
  });

  it("counts a late start from when it started, so no two sends come closer than the limit", () => {
    const pace = new Pace(10, 0);
    expect(pace.book(0)).toBe(0);
    pace.started(60);
    expect(pace.book(70)).toBe(160);
  });

  it("sends at once without a limit, unless a hold says otherwise", () => {
    const pace = new Pace(null, 0);
    expect([pace.book(5), pace.book(5)]).toEqual([5, 5]);
    pace.hold(1_000);
    expect(pace.book(10)).toBe(1_000);
    expect(pace.limited).toBe(false);
  });

  it("claims what fits in a window: all without a limit, at least one with one", () => {
    expect(new Pace(null, 0).fits(1_000, 10)).toBe(10);
    expect(new Pace(4, 0).fits(1_000, 10)).toBe(4);
    expect(new Pace(1, 0).fits(500, 10)).toBe(1);
    expect(new Pace(500, 0).fits(1_000, 10)).toBe(10);
  });
});

describe("retryAfter", () => {
  const now = Date.parse("2026-11-27T10:00:00Z");
  it.each([
    [429, "5", 5_000],
    [503, " 120 ", 120_000],
    [429, "Fri, 27 Nov 2026 10:00:30 GMT", 30_000],
    [503, "Fri, 27 Nov 2026 09:59:00 GMT", 0],
    [429, "soon", null],
    [429, undefined, null],
    [500, "5", null],
    [200, "5", null],
  ])("HTTP %s with Retry-After %j waits %j ms", (status, header, expected) => {
    expect(retryAfter(status, header, now)).toBe(expected);
  });
});
