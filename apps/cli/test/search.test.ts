// `deskline contacts|tickets search`: `--where` conditions read into filter groups (a table of
// them, in process), then the commands against the real server: AND within a group, `--or-where`
// starting the next, every page printed, and a condition that does not read refused as usage.
import { api, newWorkspace } from "@deskline/test-kit";
import { beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../src/errors.js";
import { filterGroupsOf, filterOf } from "../src/search/where.js";
import { cli, jsonLines } from "./helpers.js";

const FIELDS = { flags: new Set(["do_not_contact"]) };

describe("--where conditions", () => {
  it.each([
    ["lifecycle_stage=lead", { field: "lifecycle_stage", operator: "eq", value: "lead" }],
    ["name != Ada Lovelace", { field: "name", operator: "neq", value: "Ada Lovelace" }],
    ["custom_fields.seats>=10", { field: "custom_fields.seats", operator: "gte", value: 10 }],
    ["custom_fields.seats < 2.5", { field: "custom_fields.seats", operator: "lt", value: 2.5 }],
    ['custom_fields.zip="01234"', { field: "custom_fields.zip", operator: "eq", value: "01234" }],
    ["custom_fields.trial=true", { field: "custom_fields.trial", operator: "eq", value: true }],
    [
      "custom_fields.plan in pro, team",
      { field: "custom_fields.plan", operator: "in", values: ["pro", "team"] },
    ],
    ["tags nin vip,beta", { field: "tags", operator: "nin", values: ["vip", "beta"] }],
    ["email exists", { field: "email", operator: "exists", value: true }],
    ["email exists false", { field: "email", operator: "exists", value: false }],
    ["name prefix Ad", { field: "name", operator: "prefix", value: "Ad" }],
    ["do_not_contact=yes", { field: "do_not_contact", operator: "eq", value: true }],
    [
      "created_at > 2026-01-01T00:00:00Z",
      { field: "created_at", operator: "gt", value: "2026-01-01T00:00:00Z" },
    ],
    ["phone=555 0100", { field: "phone", operator: "eq", value: "555 0100" }],
  ])("%s", (text, filter) => {
    expect(filterOf(text, FIELDS)).toEqual(filter);
  });

  it.each(["lifecycle_stage", "name like Ada", "=lead", "tags in"])("refuses %j as usage", (text) => {
    expect(() => filterOf(text, FIELDS)).toThrow(UsageError);
  });

  it("ANDs within a group; --or-where starts the next", () => {
    const groups = filterGroupsOf(
      [
        { text: "a=1", startsGroup: false },
        { text: "b=2", startsGroup: false },
        { text: "c=3", startsGroup: true },
      ],
      FIELDS,
    );
    expect(groups.map((g) => g.filters.map((f) => f.field))).toEqual([["a", "b"], ["c"]]);
  });
});

describe("deskline contacts|tickets search", () => {
  let key: string;
  const names: Record<string, string> = {};

  beforeAll(async () => {
    ({ key } = await newWorkspace());
    const bodies = [
      { name: "Ada", lifecycle_stage: "lead", custom_fields: { plan: "pro", seats: 12 } },
      { name: "Alan", lifecycle_stage: "lead", custom_fields: { plan: "free", seats: 1 } },
      { name: "Grace", lifecycle_stage: "customer", tags: ["vip"] },
      { name: "Edsger", lifecycle_stage: "customer" },
    ];
    for (const body of bodies) {
      const response = await api.post("/open/v1/contacts", { key, body });
      expect(response.status).toBe(201);
      names[response.body.id] = body.name;
    }
    const ticket = await api.post("/open/v1/tickets", { key, body: { subject: "Fire", priority: "urgent" } });
    expect(ticket.status).toBe(201);
  });

  it("finds each group's matches, oldest first when sorted so, as JSON Lines and as a table", async () => {
    const args = [
      "contacts",
      "search",
      "--where",
      "lifecycle_stage=lead",
      "--where",
      "custom_fields.plan in pro,team",
    ];
    const json = await cli([...args, "--or-where", "tags=vip", "--sort", "created_at:asc", "--json"], {
      key,
    });
    expect(json.code, json.stderr).toBe(0);
    expect(jsonLines(json.stdout).map((c: { name: string }) => c.name)).toEqual(["Ada", "Grace"]);
    const table = await cli([...args, "--limit", "5"], { key });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+NAME/);
    expect(table.stdout).toContain("Ada");
    expect(table.stdout).not.toContain("Alan");
  });

  it("searches tickets, and a condition that does not read is a usage error (exit 2)", async () => {
    const found = await cli(["tickets", "search", "--where", "priority in urgent,high", "--json"], { key });
    expect(found.code, found.stderr).toBe(0);
    expect(jsonLines(found.stdout).map((t: { subject: string }) => t.subject)).toEqual(["Fire"]);
    const wrong = await cli(["contacts", "search", "--where", "lifecycle_stage"], { key });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/field=value/);
    const refused = await cli(["contacts", "search", "--where", "nickname=x"], { key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/nickname/);
  });
});
