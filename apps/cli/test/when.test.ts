// The time flags' grammar, as a table: durations back from now, Unix seconds, RFC 3339, and what
// is refused.
import { describe, expect, it } from "vitest";
import { durationSeconds, pointInTime, rfc3339, secondsOf } from "../src/when.js";

const NOW = 1_800_000_000;

describe("points in time", () => {
  it.each([
    ["2d", NOW - 2 * 86_400],
    ["6h", NOW - 6 * 3_600],
    ["30m", NOW - 30 * 60],
    ["90s", NOW - 90],
    ["1w", NOW - 7 * 86_400],
    ["1d12h", NOW - 36 * 3_600],
    ["0s", NOW],
    ["1767225600", 1_767_225_600],
    ["2026-01-01T00:00:00Z", 1_767_225_600],
    ["2026-01-01T01:00:00.999+01:00", 1_767_225_600],
  ])("%s is %i", (value, expected) => {
    expect(pointInTime(value, NOW)).toBe(expected);
  });

  it.each([
    "",
    "2 d",
    "2days",
    "-2d",
    "d",
    "1.5h",
    "2026-01-01",
    "2026-13-01T00:00:00Z",
    "yesterday",
    "1234567890123",
  ])("refuses %j", (value) => {
    expect(pointInTime(value, NOW)).toBeUndefined();
  });

  it("keeps absolute times and durations apart", () => {
    expect(secondsOf("2d")).toBeUndefined();
    expect(durationSeconds("1767225600")).toBeUndefined();
    expect(rfc3339(1_767_225_600)).toBe("2026-01-01T00:00:00Z");
  });
});
