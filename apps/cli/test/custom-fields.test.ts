// `deskline custom-fields …` and the typed custom fields of `contacts import`, against the real
// server: definitions made, listed, changed and deleted; a CSV cell sent as its field's type, and
// one that does not read as it failing its own row.
import { api, newWorkspace } from "@deskline/test-kit";
import { beforeEach, describe, expect, it } from "vitest";
import { cli, jsonLines, scratch, writeScratch } from "./helpers.js";

let key: string;
beforeEach(async () => {
  ({ key } = await newWorkspace());
});

describe("custom-fields", () => {
  it("creates, lists (table and JSON), updates and deletes definitions", async () => {
    const created = await cli(
      [
        "custom-fields",
        "create",
        "plan",
        "--type",
        "select",
        "--option",
        "free",
        "--option",
        "team",
        "--json",
      ],
      { key },
    );
    expect(created.stderr).toBe("");
    expect(JSON.parse(created.stdout)).toMatchObject({
      key: "plan",
      type: "select",
      options: ["free", "team"],
    });
    expect(
      (await cli(["custom-fields", "create", "seats", "--type", "number", "--label", "Seats"], { key })).code,
    ).toBe(0);

    const table = await cli(["custom-fields", "list"], { key });
    expect(table.stdout).toMatch(/KEY\s+TYPE\s+LABEL/);
    expect(table.stdout).toMatch(/seats\s+number\s+Seats/);
    const listed = jsonLines((await cli(["custom-fields", "list", "--json"], { key })).stdout);
    expect(listed.map((d) => d.key)).toEqual(["seats", "plan"]);

    const updated = await cli(["custom-fields", "update", "seats", "--required", "true", "--json"], { key });
    expect(JSON.parse(updated.stdout)).toMatchObject({ key: "seats", required: true });

    const deleted = await cli(["custom-fields", "delete", "plan", "seats"], { key });
    expect(deleted.stdout.trim().split("\n")).toEqual(["deleted plan", "deleted seats"]);
    expect((await api.get("/open/v1/custom-field-definitions", { key })).body.data).toEqual([]);
  });

  it("an API refusal is exit 1 with its code", async () => {
    await cli(["custom-fields", "create", "seats", "--type", "number"], { key });
    const again = await cli(["custom-fields", "create", "seats", "--type", "text"], { key });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("custom_field_key_taken");
  });
});

describe("contacts import with typed custom fields", () => {
  it("sends a cell as its field's type, and fails a row whose cell does not read as it", async () => {
    await api.post("/open/v1/custom-field-definitions", {
      key,
      body: { key: "seats", label: "Seats", type: "number" },
    });
    await api.post("/open/v1/custom-field-definitions", {
      key,
      body: { key: "paid", label: "Paid", type: "boolean" },
    });
    const file = writeScratch(
      scratch(),
      "typed.csv",
      [
        "name,email,custom_fields.seats,custom_fields.paid,custom_fields.note",
        "Ada,ada@typed.test,25,yes,007",
        "Bob,bob@typed.test,abc,no,",
      ].join("\n"),
    );
    const result = await cli(["contacts", "import", file, "--json"], { key });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ rows: 2, created: 1, failed: 1 });
    expect(result.stderr).toContain("line 3: custom_fields.seats: 'abc' is not a number");
    const [ada] = (await api.get("/open/v1/contacts", { key, query: { email: "ada@typed.test" } })).body.data;
    // `note` has no definition: it stays text, leading zeros and all.
    expect(ada.custom_fields).toEqual({ seats: 25, paid: true, note: "007" });
  });
});
