// The typed custom field rules on their own (contacts/custom-field-values.ts): what each type
// takes, how a filter value reads, and what a write's check answers. custom-fields.test.ts runs
// them through the API.
import { describe, expect, it } from "vitest";
import {
  type CustomFieldRule,
  checkCustomFields,
  customFieldFilter,
  isCalendarDate,
  readFilterValue,
} from "../src/contacts/custom-field-values.js";
import { AppError } from "../src/platform/errors.js";

const rule = (key: string, type: CustomFieldRule["type"], extra: Partial<CustomFieldRule> = {}) => ({
  key,
  type,
  options: type === "select" ? ["free", "team"] : null,
  required: false,
  ...extra,
});
const seats = rule("seats", "number");

/** The error `run` throws, as `{code, param}`; undefined when it throws none. */
function refusal(run: () => unknown): { code: string; param?: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, param: error.param };
  }
}

describe("isCalendarDate", () => {
  it.each([
    ["2026-02-28", true],
    ["2028-02-29", true],
    ["2026-02-29", false],
    ["2026-02-30", false],
    ["2026-13-01", false],
    ["2026-1-01", false],
    ["2026-01-01T00:00:00Z", false],
  ])("%s → %s", (text, valid) => expect(isCalendarDate(text)).toBe(valid));
});

describe("readFilterValue", () => {
  it.each([
    [seats, "10", 10],
    [seats, 10, 10],
    [seats, "-2.5", -2.5],
    [seats, "1e3", 1000],
    [rule("paid", "boolean"), "true", true],
    [rule("paid", "boolean"), false, false],
    [rule("renewal", "date"), "2026-03-01", "2026-03-01"],
    [rule("plan", "select"), "team", "team"],
    [rule("note", "text"), "10", "10"],
  ])("%j reads %j as %j", (definition, value, read) => {
    expect(readFilterValue(definition, value, "p")).toEqual(read);
  });

  it.each([
    [seats, "abc"],
    [seats, "0x10"],
    [seats, ""],
    [seats, true],
    [rule("paid", "boolean"), "yes"],
    [rule("renewal", "date"), "2026-02-30"],
    [rule("plan", "select"), "gold"],
    [rule("note", "text"), 5],
  ])("%j refuses %j, naming the param", (definition, value) => {
    expect(refusal(() => readFilterValue(definition, value, "filters[0].value"))).toEqual({
      code: "parameter_invalid",
      param: "filters[0].value",
    });
  });
});

describe("checkCustomFields", () => {
  const definitions = new Map([
    ["seats", seats],
    ["account", rule("account", "text", { required: true })],
  ]);

  it("answers the keys no definition names, and lets null clear them", () => {
    expect(checkCustomFields(definitions, { account: "A", extra: 1, gone: null }, "create")).toEqual([
      "extra",
    ]);
  });

  it.each([
    [{ account: "A", seats: "abc" }, "create", "parameter_invalid", "custom_fields.seats"],
    [{ seats: 1 }, "create", "parameter_missing", "custom_fields.account"],
    [{ account: null }, "create", "parameter_missing", "custom_fields.account"],
    [{ account: null }, "update", "parameter_invalid", "custom_fields.account"],
  ] as const)("%j on %s: %s naming %s", (values, kind, code, param) => {
    expect(refusal(() => checkCustomFields(definitions, values, kind))).toEqual({ code, param });
  });

  it("an update need not carry a required key", () => {
    expect(checkCustomFields(definitions, { seats: 3 }, "update")).toEqual([]);
  });
});

describe("customFieldFilter", () => {
  it("reads each custom_fields.<key> parameter by its definition and leaves the others", () => {
    const definitions = new Map([["seats", seats]]);
    expect(customFieldFilter(definitions, { "custom_fields.seats": "10", tag: ["vip"] })).toEqual({
      "custom_fields.seats": 10,
    });
    expect(refusal(() => customFieldFilter(definitions, { "custom_fields.plan": "x" }))).toEqual({
      code: "parameter_invalid",
      param: "custom_fields.plan",
    });
  });
});
