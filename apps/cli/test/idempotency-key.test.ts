// The import's idempotency keys and the server's request fingerprint read a body through one
// stable JSON stringify (safe-stable-stringify): the same text for the same value, key order and
// `undefined` members included, so the two can never disagree on what "the same body" is.
import { describe, expect, it } from "vitest";
import { fingerprintText } from "../../server/src/platform/http/idempotency.js";
import { canonicalJson, rowIdempotencyKey } from "../src/import/idempotency.js";

/** The body's part of the server's fingerprint text. */
const serverBody = (body: unknown) => fingerprintText("POST", "/open/v1/contacts", body).split("\n")[2];

describe("one stable JSON for both idempotency fingerprints", () => {
  it.each([
    ["key order", { b: 1, a: 2 }, '{"a":2,"b":1}'],
    ["nested key order", { z: { y: [{ b: 1, a: null }] }, a: "x" }, '{"a":"x","z":{"y":[{"a":null,"b":1}]}}'],
    [
      "an undefined member is left out",
      { email: "a@example.com", name: undefined },
      '{"email":"a@example.com"}',
    ],
    ["undefined in an array is null", { tags: ["a", undefined] }, '{"tags":["a",null]}'],
    ["an undefined body is null", undefined, "null"],
    ["a null body", null, "null"],
    ["strings are escaped as JSON", { 'k"ey': "line\nbreak" }, '{"k\\"ey":"line\\nbreak"}'],
  ])("%s", (_case, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
    expect(serverBody(value)).toBe(expected);
  });

  it("gives a row with an undefined member the key of the row without it", () => {
    const key = rowIdempotencyKey("contacts.csv", { email: "a@example.com" });
    expect(rowIdempotencyKey("contacts.csv", { name: undefined, email: "a@example.com" })).toBe(key);
    expect(rowIdempotencyKey("contacts.csv", { email: "b@example.com" })).not.toBe(key);
  });
});
