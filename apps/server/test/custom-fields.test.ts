// Typed custom fields: the definitions' CRUD, the checks every contact write makes against them,
// the workspace's `undefined_custom_fields`, the list filter and the searchable keys' indexes.
// docs/decisions.md, "Typed custom fields".
import { beforeAll, describe, expect, it } from "vitest";
import { admin, api, newKey, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";

const DEFS = "/open/v1/custom-field-definitions";
const database = runDatabase();

let key: string;
let workspaceId: string;

const define = (body: Record<string, unknown>, as = key) => api.post(DEFS, { key: as, body });
const createContact = (body: Record<string, unknown>, as = key) =>
  api.post("/open/v1/contacts", { key: as, body });

/** The error a response carries, as the tests compare it. */
const errorOf = (response: { status: number; body: any }) => ({
  status: response.status,
  code: response.body.error?.code,
  param: response.body.error?.param,
});

beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
  for (const body of [
    { key: "seats", label: "Seats", type: "number", searchable: true },
    { key: "plan", label: "Plan", type: "select", options: ["free", "team", "enterprise"] },
    { key: "renewal", label: "Renewal", type: "date" },
    { key: "churn_risk", label: "Churn risk", type: "boolean" },
    { key: "note", label: "Note", type: "text" },
  ]) {
    expect((await define(body)).status).toBe(201);
  }
});

describe("definitions", () => {
  it("creates, reads, lists, updates and deletes a definition", async () => {
    const created = await define({ key: "region", label: "Region", type: "text" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      key: "region",
      object: "custom_field_definition",
      type: "text",
      options: null,
      required: false,
      searchable: false,
    });
    expect((await api.get(`${DEFS}/region`, { key })).body.label).toBe("Region");
    const list = await api.get(DEFS, { key });
    expect(list.body).toMatchObject({ object: "list", has_more: false });
    expect(list.body.data.map((d: { key: string }) => d.key)).toEqual([
      "region",
      "note",
      "churn_risk",
      "renewal",
      "plan",
      "seats",
    ]);
    const updated = await api.patch(`${DEFS}/region`, { key, body: { label: "Sales region", type: "text" } });
    expect(updated.body).toMatchObject({ label: "Sales region", type: "text" });
    const deleted = await api.delete(`${DEFS}/region`, { key });
    expect(deleted.body).toEqual({ key: "region", object: "custom_field_definition", deleted: true });
    expect(errorOf(await api.delete(`${DEFS}/region`, { key }))).toMatchObject({
      status: 404,
      code: "resource_missing",
    });
  });

  it("refuses a key defined already, a type change and options that do not fit the type", async () => {
    expect(errorOf(await define({ key: "seats", label: "Again", type: "text" }))).toEqual({
      status: 409,
      code: "custom_field_key_taken",
      param: "key",
    });
    expect(errorOf(await api.patch(`${DEFS}/seats`, { key, body: { type: "text" } }))).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "type",
    });
    expect(errorOf(await define({ key: "tier", label: "Tier", type: "select" }))).toEqual({
      status: 400,
      code: "parameter_missing",
      param: "options",
    });
    expect(errorOf(await define({ key: "tier", label: "Tier", type: "text", options: ["a"] }))).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "options",
    });
    expect(errorOf(await define({ key: "a.b", label: "Dotted", type: "text" }))).toMatchObject({
      status: 400,
      param: "key",
    });
  });

  it("reads with contacts:read and changes only with contacts:write", async () => {
    const reader = await newKey(workspaceId, ["contacts:read"]);
    expect((await api.get(DEFS, { key: reader })).status).toBe(200);
    expect((await api.get(`${DEFS}/seats`, { key: reader })).status).toBe(200);
    const refused = await define({ key: "other", label: "Other", type: "text" }, reader);
    expect(errorOf(refused)).toMatchObject({ status: 403, code: "insufficient_scope" });
    expect((await api.patch(`${DEFS}/seats`, { key: reader, body: { label: "x" } })).status).toBe(403);
    expect((await api.delete(`${DEFS}/seats`, { key: reader })).status).toBe(403);
    const writer = await newKey(workspaceId, ["contacts:write"]);
    expect((await api.get(DEFS, { key: writer })).status).toBe(403);
  });

  it("another workspace's definitions neither show nor apply", async () => {
    const other = await newWorkspace();
    expect((await api.get(DEFS, { key: other.key })).body.data).toEqual([]);
    expect((await api.get(`${DEFS}/seats`, { key: other.key })).status).toBe(404);
    const contact = await createContact({ name: "Elsewhere", custom_fields: { seats: "abc" } }, other.key);
    expect(contact.status).toBe(201);
  });
});

describe("contact creates are checked against the definitions", () => {
  it("a number field refuses a string on create, naming the field and its type", async () => {
    const response = await createContact({ name: "Ada", custom_fields: { seats: "abc" } });
    expect(errorOf(response)).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "custom_fields.seats",
    });
    expect(response.body.error.message).toContain("number");
  });

  it("takes values of their types, and null clears", async () => {
    const custom_fields = { seats: 12, plan: "team", renewal: "2028-02-29", churn_risk: false, note: "hi" };
    const created = await createContact({ name: "Typed", custom_fields });
    expect(created.status).toBe(201);
    expect(created.body.custom_fields).toEqual(custom_fields);
    const cleared = await api.patch(`/open/v1/contacts/${created.body.id}`, {
      key,
      body: { custom_fields: { note: null } },
    });
    expect(cleared.body.custom_fields).not.toHaveProperty("note");
  });

  it.each([
    ["a select field an unknown option", { plan: "gold" }, "custom_fields.plan"],
    ["a date field a day the calendar lacks", { renewal: "2026-02-30" }, "custom_fields.renewal"],
    ["a date field another format", { renewal: "02/03/2026" }, "custom_fields.renewal"],
    ["a boolean field a string", { churn_risk: "true" }, "custom_fields.churn_risk"],
    ["a text field a number", { note: 5 }, "custom_fields.note"],
  ])("refuses in %s", async (_name, values, param) => {
    expect(errorOf(await createContact({ name: "Wrong", custom_fields: values }))).toEqual({
      status: 400,
      code: "parameter_invalid",
      param,
    });
  });
});

describe("contact updates, batches and merges are checked against the definitions", () => {
  it("PATCH refuses a wrong type", async () => {
    const { body } = await createContact({ name: "Patched" });
    const response = await api.patch(`/open/v1/contacts/${body.id}`, {
      key,
      body: { custom_fields: { seats: "abc" } },
    });
    expect(errorOf(response)).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "custom_fields.seats",
    });
  });

  it("a batch upsert fails the wrong item alone", async () => {
    const response = await api.post("/open/v1/contacts/batch", {
      key,
      body: {
        match: "email",
        contacts: [
          { name: "Good", email: "good@batch.test", custom_fields: { seats: 3 } },
          { name: "Bad", email: "bad@batch.test", custom_fields: { seats: "abc" } },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.data[0]).toMatchObject({ status: "created" });
    expect(response.body.data[1]).toMatchObject({
      status: "error",
      error: { code: "parameter_invalid", param: "custom_fields.seats" },
    });
  });

  it("a merge refuses values the survivor would take against their type", async () => {
    // Stored before `legacy` was defined: untyped then.
    const donor = await createContact({ name: "Donor", custom_fields: { legacy: "abc" } });
    const survivor = await createContact({ name: "Survivor" });
    expect((await define({ key: "legacy", label: "Legacy", type: "number" })).status).toBe(201);
    const response = await api.post(`/open/v1/contacts/${survivor.body.id}/merge`, {
      key,
      body: { contact_ids: [donor.body.id] },
    });
    expect(errorOf(response)).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "custom_fields.legacy",
    });
    // Nothing was written: the donor is still there.
    expect((await api.get(`/open/v1/contacts/${donor.body.id}`, { key })).status).toBe(200);
  });
});

describe("required fields", () => {
  let workspace: { key: string };
  beforeAll(async () => {
    workspace = await newWorkspace();
    await define({ key: "account", label: "Account", type: "text", required: true }, workspace.key);
  });

  it("a create without it is refused, a PATCH cannot clear it, a batch-created contact needs it", async () => {
    const missing = await createContact({ name: "No account" }, workspace.key);
    expect(errorOf(missing)).toEqual({
      status: 400,
      code: "parameter_missing",
      param: "custom_fields.account",
    });
    const created = await createContact(
      { name: "Has one", custom_fields: { account: "A-1" } },
      workspace.key,
    );
    expect(created.status).toBe(201);
    const clear = await api.patch(`/open/v1/contacts/${created.body.id}`, {
      key: workspace.key,
      body: { custom_fields: { account: null } },
    });
    expect(errorOf(clear)).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "custom_fields.account",
    });
    const batch = await api.post("/open/v1/contacts/batch", {
      key: workspace.key,
      body: {
        match: "email",
        contacts: [
          { name: "New without", email: "without@req.test" },
          { name: "New with", email: "with@req.test", custom_fields: { account: "A-2" } },
        ],
      },
    });
    expect(batch.body.data.map((item: { status: string }) => item.status)).toEqual(["error", "created"]);
    expect(batch.body.data[0].error).toMatchObject({
      code: "parameter_missing",
      param: "custom_fields.account",
    });
    // An update of an existing contact by the batch does not need it again.
    const update = await api.post("/open/v1/contacts/batch", {
      key: workspace.key,
      body: { match: "email", contacts: [{ email: "with@req.test", company: "Acme" }] },
    });
    expect(update.body.data[0]).toMatchObject({ status: "updated" });
  });
});

describe("undefined keys", () => {
  it("are kept by default and refused when the workspace says so", async () => {
    const workspace = await newWorkspace();
    const kept = await createContact({ name: "Free", custom_fields: { anything: "goes" } }, workspace.key);
    expect(kept.status).toBe(201);
    const setting = await admin("PATCH", `/admin/v1/workspaces/${workspace.workspaceId}`, {
      undefined_custom_fields: "refuse",
    });
    expect(setting.body).toMatchObject({ undefined_custom_fields: "refuse" });
    const refused = await createContact({ name: "Free", custom_fields: { anything: "goes" } }, workspace.key);
    expect(errorOf(refused)).toEqual({
      status: 400,
      code: "parameter_invalid",
      param: "custom_fields.anything",
    });
    // Clearing an undefined key stays possible.
    const cleared = await api.patch(`/open/v1/contacts/${kept.body.id}`, {
      key: workspace.key,
      body: { custom_fields: { anything: null } },
    });
    expect(cleared.status).toBe(200);
  });
});

describe("the list filter", () => {
  let workspace: { key: string };
  const names = async (query: Record<string, string>) => {
    const response = await api.get("/open/v1/contacts", { key: workspace.key, query });
    expect(response.status).toBe(200);
    return response.body.data.map((contact: { name: string }) => contact.name).sort();
  };
  beforeAll(async () => {
    workspace = await newWorkspace();
    await define({ key: "seats", label: "Seats", type: "number" }, workspace.key);
    await define({ key: "paid", label: "Paid", type: "boolean" }, workspace.key);
    for (const [name, seats, paid] of [
      ["Ten", 10, true],
      ["Ten unpaid", 10, false],
      ["Twenty", 20, true],
    ] as const) {
      await createContact({ name, custom_fields: { seats, paid } }, workspace.key);
    }
  });

  it("reads the value by the field's type; several AND", async () => {
    expect(await names({ "custom_fields.seats": "10" })).toEqual(["Ten", "Ten unpaid"]);
    expect(await names({ "custom_fields.seats": "10", "custom_fields.paid": "true" })).toEqual(["Ten"]);
    expect(await names({ "custom_fields.seats": "1e1" })).toEqual(["Ten", "Ten unpaid"]);
  });

  it.each([
    [{ "custom_fields.seats": "ten" }, 400, "parameter_invalid", "custom_fields.seats"],
    [{ "custom_fields.paid": "yes" }, 400, "parameter_invalid", "custom_fields.paid"],
    [{ "custom_fields.unknown": "1" }, 400, "parameter_invalid", "custom_fields.unknown"],
    [{ "custom_fields.a.b": "1" }, 400, "parameter_unknown", "custom_fields.a.b"],
  ])("refuses %j", async (query, status, code, param) => {
    const response = await api.get("/open/v1/contacts", { key: workspace.key, query });
    expect(errorOf(response)).toEqual({ status, code, param });
  });
});

describe("searchable keys", () => {
  const indexNames = async () =>
    (await (await database()).collection("contacts").listIndexes().toArray()).map((index) => index.name);

  it("have an index of their own, dropped when no workspace marks the key any more", async () => {
    const name = "workspace_custom_fields.seats_newest";
    expect(await indexNames()).toContain(name);
    const index = (await (await database()).collection("contacts").listIndexes().toArray()).find(
      (i) => i.name === name,
    );
    expect(index?.key).toEqual({ workspace_id: 1, "custom_fields.seats": 1, _id: -1 });

    const workspace = await newWorkspace();
    await define({ key: "cf_index_probe", label: "Probe", type: "text", searchable: true }, workspace.key);
    expect(await indexNames()).toContain("workspace_custom_fields.cf_index_probe_newest");
    await api.patch(`${DEFS}/cf_index_probe`, { key: workspace.key, body: { searchable: false } });
    expect(await indexNames()).not.toContain("workspace_custom_fields.cf_index_probe_newest");
  });
});
