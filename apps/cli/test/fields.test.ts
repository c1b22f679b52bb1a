// The column mapping both ways, as a table: what `contacts import` makes of a cell, and what
// `contacts export` writes for the value it got back, must be inverses for every field kind.
import { describe, expect, it } from "vitest";
import { contactColumns } from "../src/export/columns.js";
import { assign, columnName, columnsOf, type Target, targetOf, toText, valueAt } from "../src/fields.js";

const catalog = contactColumns();

/** The target of a column the import must know. */
function at(column: string): Target {
  const target = targetOf(column, catalog);
  if (!target) throw new Error(`the import does not read '${column}'`);
  return target;
}

describe("a cell read by the import and written back by the export", () => {
  it.each([
    ["name", "Ada Lovelace", { name: "Ada Lovelace" }],
    ["tags", "vip;beta", { tags: ["vip", "beta"] }],
    ["segments", "emea;enterprise", { segments: ["emea", "enterprise"] }],
    ["do_not_contact", "true", { do_not_contact: true }],
    ["marketing_consent", "false", { marketing_consent: false }],
    ["custom_fields.plan", "pro", { custom_fields: { plan: "pro" } }],
    ["external_ids.crm", "4711", { external_ids: { crm: "4711" } }],
    ["address.city", "London", { address: { city: "London" } }],
    ["address.line1", 'Flat 2, "The Mews"', { address: { line1: 'Flat 2, "The Mews"' } }],
  ])("%s = %j", (column, cell, body) => {
    const target = at(column);
    const read: Record<string, unknown> = {};
    assign(read, target, cell, catalog);
    expect(read).toEqual(body);
    expect(toText(valueAt(read, target))).toBe(cell);
    expect(columnName(target)).toBe(column);
  });

  it.each([
    [null, ""],
    [undefined, ""],
    [[], ""],
    [42, "42"],
    [false, "false"],
  ])("no value or a non-text value %j is written as %j", (value, text) => {
    expect(toText(value)).toBe(text);
  });

  it("a key or part the contact lacks reads as no value", () => {
    expect(valueAt({ address: null }, { field: "address", key: "city" })).toBeUndefined();
    expect(valueAt({ custom_fields: {} }, { field: "custom_fields", key: "plan" })).toBeUndefined();
  });
});

describe("the export's columns", () => {
  it("are id, the create fields (object parts, map keys as given) and the time stamps", () => {
    const names = columnsOf(catalog, (field) => (field === "custom_fields" ? ["a", "b"] : [])).map(
      columnName,
    );
    expect(names[0]).toBe("id");
    expect(names.slice(-2)).toEqual(["created_at", "updated_at"]);
    expect(names).toContain("address.postal_code");
    expect(names.filter((n) => n.startsWith("custom_fields."))).toEqual([
      "custom_fields.a",
      "custom_fields.b",
    ]);
    expect(names.some((n) => n.startsWith("external_ids"))).toBe(false);
    // Every column but the API's own is one the import reads.
    for (const name of names.slice(1, -2)) expect(() => at(name)).not.toThrow();
  });
});
