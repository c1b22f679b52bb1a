// The pure retry rules: which answers are retried, and how long to wait.
import { describe, expect, it } from "vitest";
import { isRetryableStatus, retryDelayMs } from "../src/retry.js";

describe("isRetryableStatus", () => {
  it.each([
    [408, undefined, true],
    [409, "idempotency_key_in_flight", true],
    [409, "concurrent_update", true],
    [409, "email_taken", false],
    [409, "ticket_status_terminal", false],
    [409, undefined, false],
    [429, "rate_limited", true],
    [500, "internal_error", true],
    [503, "database_unavailable", true],
    [400, "parameter_invalid", false],
    [401, "invalid_api_key", false],
    [403, "insufficient_scope", false],
    [404, "resource_missing", false],
    [422, "idempotency_key_reused", false],
  ])("%i %s → %s", (status, code, expected) => {
    expect(isRetryableStatus(status, code)).toBe(expected);
  });
});

describe("retryDelayMs", () => {
  it.each([
    [1, 0, 250],
    [1, 1, 500],
    [2, 0, 500],
    [2, 1, 1000],
    [3, 0.5, 1500],
    [10, 1, 8000], // capped
  ])("retry %i with random %f waits %i ms", (retry, random, expected) => {
    expect(retryDelayMs(retry, null, () => random)).toBe(expected);
  });

  it("follows Retry-After in seconds or as an HTTP date, capped at a minute", () => {
    expect(retryDelayMs(1, "3", () => 0)).toBe(3000);
    expect(retryDelayMs(1, "0", () => 1)).toBe(0);
    expect(retryDelayMs(1, "3600", () => 0)).toBe(60_000);
    const now = Date.parse("2026-03-02T10:00:00Z");
    expect(retryDelayMs(1, "Mon, 02 Mar 2026 10:00:05 GMT", () => 0, now)).toBe(5000);
    expect(retryDelayMs(1, "garbage", () => 1)).toBe(500);
  });
});
