// Table tests of the I-JSON checks (src/platform/http/i-json.ts); hostile-input.test.ts sends them over HTTP.
import { describe, expect, it } from "vitest";
import { findDuplicateName, findUnsafeValue } from "../src/platform/http/i-json.js";

describe("findDuplicateName", () => {
  it.each([
    ['{"a":1,"b":2}', undefined],
    ['{"a":1,"a":2}', "a"],
    ['{"a":{"b":1},"c":{"b":2}}', undefined],
    ['{"a":{"b":1,"b":2}}', "a.b"],
    ['{"a":[{"b":1},{"b":1,"c":2,"b":3}]}', "a[1].b"],
    ['{"a":"\\"a\\":1,","a":2}', "a"],
    ['{"\\u0061":1,"a":2}', "a"],
    ['{"x":["a","a"]}', undefined],
    ['[{"a":1},{"a":1}]', undefined],
    ['{"a\\\\":1,"a":2}', undefined],
  ])("%s → %s", (text, expected) => {
    expect(findDuplicateName(text)).toBe(expected);
  });

  it("walks 100,000 levels without recursion", () => {
    const depth = 100_000;
    expect(findDuplicateName(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`)).toBeUndefined();
  });
});

describe("findUnsafeValue", () => {
  it.each([
    [{ a: "ok", b: 1.5, c: [2 ** 53 - 1, -(2 ** 53 - 1)], d: null, e: true }, undefined],
    [{ a: "😀" }, undefined],
    [{ a: "x\u0000" }, "a"],
    [{ a: { "k\u0000": 1 } }, "a.k\u0000"],
    [{ tags: ["ok", "\ud800"] }, "tags[1]"],
    [{ a: "\udc00x" }, "a"],
    [{ n: 2 ** 53 }, "n"],
    [{ n: -(2 ** 53) }, "n"],
    [{ n: Number.POSITIVE_INFINITY }, "n"],
    [{ n: 1e300 }, "n"],
  ])("%j → %s", (value, expected) => {
    expect(findUnsafeValue(value)?.param).toBe(expected);
  });
});
