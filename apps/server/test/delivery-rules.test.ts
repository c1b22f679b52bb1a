import { describe, expect, it } from "vitest";
import { isSubscribed, subscribedTypes } from "../src/events/model.js";
import { ADDRESS_REFUSED, type AttemptResult, classifyAttempt } from "../src/webhooks/delivery/outcome.js";
import { retryDelay, withJitter } from "../src/webhooks/delivery/retry-schedule.js";
import { refusedRange, refusedUrlHost } from "../src/webhooks/endpoints/address-policy.js";
import { parseRetryDelays } from "../src/webhooks/settings.js";
import { REACHABLE_ADDRESSES, REFUSED_ADDRESSES } from "./helpers/special-addresses.js";

// Table tests of the delivery's pure rules: retry schedule, outcome, and the SSRF address policy.

describe("WEBHOOK_RETRY_DELAYS", () => {
  it.each([
    ["1m,5m,30m,2h", [60_000, 300_000, 1_800_000, 7_200_000]],
    ["50ms,50ms,50ms,50ms", [50, 50, 50, 50]],
    [" 1s , 2s ", [1_000, 2_000]],
    ["1.5s", [1_500]],
    ["0ms", [0]],
  ])("%s parses", (text, expected) => {
    expect(parseRetryDelays(text)).toEqual(expected);
  });

  it.each([["1m,1m,1m,1m,1m"], ["5"], ["5d"], ["m"], ["-1s"], ["1m,,2m"], [""]])("%j is refused", (text) => {
    expect(() => parseRetryDelays(text)).toThrow();
  });

  it.each([
    [0, 800],
    [0.5, 1000],
    [0.999999, 1200],
  ])("jitter with random %d gives %d of 1000", (random, expected) => {
    expect(withJitter(1000, () => random)).toBe(expected);
  });

  it("jitter stays within ±20 % over many draws", () => {
    for (let i = 0; i < 1000; i++) {
      const d = withJitter(60_000);
      expect(d).toBeGreaterThanOrEqual(48_000);
      expect(d).toBeLessThanOrEqual(72_000);
    }
  });

  it.each([
    [2, 1000],
    [3, 2000],
    [4, 3000],
    [5, 4000],
    [6, null],
  ])("before attempt %d the wait is %s", (attempt, expected) => {
    expect(retryDelay([1000, 2000, 3000, 4000], attempt, () => 0.5)).toBe(expected);
  });
});

describe("attempt outcome", () => {
  const table: [AttemptResult, boolean, number | null, string | null][] = [
    [{ kind: "response", statusCode: 200 }, true, 200, null],
    [{ kind: "response", statusCode: 204 }, true, 204, null],
    [{ kind: "response", statusCode: 299 }, true, 299, null],
    [{ kind: "response", statusCode: 301 }, false, 301, "redirect not followed (HTTP 301)"],
    [{ kind: "response", statusCode: 307 }, false, 307, "redirect not followed (HTTP 307)"],
    [{ kind: "response", statusCode: 199 }, false, 199, "HTTP 199"],
    [{ kind: "response", statusCode: 400 }, false, 400, "HTTP 400"],
    [{ kind: "response", statusCode: 410 }, false, 410, "HTTP 410"],
    [{ kind: "response", statusCode: 503 }, false, 503, "HTTP 503"],
    [{ kind: "timeout", timeoutMs: 10000 }, false, null, "timeout after 10000 ms"],
    [{ kind: "address_refused", reason: "127.0.0.1 is loopback" }, false, null, ADDRESS_REFUSED],
    [{ kind: "network_error", code: "ECONNREFUSED", message: "x" }, false, null, "connection refused"],
    [{ kind: "network_error", code: "EWHAT", message: "odd" }, false, null, "EWHAT: odd"],
    [{ kind: "network_error", code: undefined, message: "odd" }, false, null, "odd"],
  ];
  it.each(table)("%j", (result, succeeded, statusCode, error) => {
    expect(classifyAttempt(result)).toEqual({ succeeded, statusCode, error });
  });
});

describe("SSRF address policy (ipaddr.js ranges of the IANA special-purpose registries)", () => {
  it.each(REFUSED_ADDRESSES)("%s (%s) is refused as %s", (address, _entry, reason) => {
    expect(refusedRange(address)).toBe(reason);
  });

  it.each([
    ["[::1]", "loopback"],
    ["fe80::1%eth0", "link-local"],
    ["example.com", "not an IP address"],
    ["127.1", "not an IP address"],
  ])("%s is refused as %s", (address, reason) => {
    expect(refusedRange(address)).toBe(reason);
  });

  it.each(REACHABLE_ADDRESSES.map((a) => [a]))("%s is allowed", (address) => {
    expect(refusedRange(address)).toBeNull();
  });

  it.each([
    ["https://169.254.169.254/x", "link-local"],
    ["https://0x7f.1/x", "loopback"],
    ["https://[::ffff:10.0.0.1]/x", "IPv4-mapped of 10.0.0.1 (private)"],
    ["https://[::10.0.0.1]:8443/x", "IPv4-compatible (deprecated)"],
    ["https://hooks.example.com/x", null],
    ["https://10.0.0.1.nip.io/x", null],
    ["https://8.8.8.8/x", null],
  ])("the endpoint URL %s: %s", (url, reason) => {
    expect(refusedUrlHost(url)).toBe(reason);
  });
});

describe("subscriptions (one rule for a delivery and a recovery's query)", () => {
  it.each([
    [["*"], "contact.created", true, undefined],
    [["contact.created", "*"], "ticket.created", true, undefined],
    [["contact.created"], "contact.created", true, ["contact.created"]],
    [["contact.created", "ticket.updated"], "ticket.created", false, ["contact.created", "ticket.updated"]],
    [[], "contact.created", false, []],
  ])("%j receives %s: %s", (subscriptions, type, receives, types) => {
    expect(isSubscribed(subscriptions, type)).toBe(receives);
    expect(subscribedTypes(subscriptions)).toEqual(types);
  });
});
