// `POST /open/v1/contacts/batch` over HTTP: upserts matched by email or external id, each item's
// own result, a replay by Idempotency-Key, what is refused whole, and concurrent batches on the
// same contacts; each created or changed contact emits its event, as a single write does.
import { describe, expect, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { eventsAbout, theEvent } from "./helpers/events.js";
import { walkPages } from "./helpers/paging.js";
import { sharedBeforeAll } from "./helpers/shared-setup.js";

const batch = (key: string, body: unknown, headers?: Record<string, string>) =>
  api.post("/open/v1/contacts/batch", { key, body, headers });

// One workspace for the batch upsert blocks below, in order: later tests meet what earlier wrote.
let key: string;
const withWorkspace = sharedBeforeAll(async () => {
  ({ key } = await newWorkspace());
});

describe("batch upsert of contacts by email", () => {
  withWorkspace();

  it("creates, updates only what differs, leaves the rest, and fails items one by one, in input order", async () => {
    const existing = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Ada", email: "ada@batch.test", lifecycle_stage: "lead", tags: ["vip"] },
    });
    const same = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Same", email: "same@batch.test" },
    });
    await api.post("/open/v1/contacts", { key, body: { name: "Taken", email: "taken@batch.test" } });

    const response = await batch(key, {
      match: "email",
      contacts: [
        { name: "New One", email: "new@batch.test", custom_fields: { plan: "pro" } },
        { email: "ADA@batch.test", lifecycle_stage: "customer", tags: ["vip"] },
        { email: "same@batch.test", name: "Same" },
        { email: "not-an-email", name: "Broken" },
        { name: "No match value" },
        { email: "nameless@batch.test" },
        { name: "Unknown field", email: "x@batch.test", shoe_size: 44 },
      ],
    });
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data.map((r: { index: number; status: string }) => [r.index, r.status])).toEqual([
      [0, "created"],
      [1, "updated"],
      [2, "unchanged"],
      [3, "error"],
      [4, "error"],
      [5, "error"],
      [6, "error"],
    ]);
    expect(data[0].contact).toMatchObject({
      name: "New One",
      email: "new@batch.test",
      custom_fields: { plan: "pro" },
    });
    expect(data[1].contact).toMatchObject({
      id: existing.body.id,
      lifecycle_stage: "customer",
      tags: ["vip"],
    });
    expect(data[1].contact.updated_at > existing.body.updated_at).toBe(true);
    expect(data[2].contact).toEqual(same.body);
    expect(data[3].error).toMatchObject({
      type: "invalid_request_error",
      code: "parameter_invalid",
      param: "email",
    });
    expect(data[4].error).toMatchObject({ code: "parameter_missing", param: "email" });
    expect(data[5].error).toMatchObject({ code: "parameter_missing", param: "name" });
    expect(data[6].error).toMatchObject({ code: "parameter_unknown", param: "shoe_size" });

    // Each changed contact emits its event, carrying what the batch answered; unchanged: none.
    expect((await theEvent(key, "contact.created", data[0].contact.id)).data).toEqual(data[0].contact);
    const updated = await theEvent(key, "contact.updated", existing.body.id);
    expect(updated.data).toEqual(data[1].contact);
    expect(updated.previous_attributes).toEqual({ email: "ada@batch.test", lifecycle_stage: "lead" });
    expect(await eventsAbout(key, same.body.id, "contact.updated")).toEqual([]);

    // What the batch answered is what is stored; the failed items wrote nothing.
    const stored = await api.get(`/open/v1/contacts/${data[0].contact.id}`, { key });
    expect(stored.body).toEqual(data[0].contact);
    for (const email of ["not-an-email", "nameless@batch.test", "x@batch.test"]) {
      const found = await api.get("/open/v1/contacts", { key, query: { email } });
      expect(found.body.data).toEqual([]);
    }
  });
});

describe("batch upsert of contacts by external id, and replayed", () => {
  withWorkspace();

  it("matches by an external id, and reports a value another contact holds", async () => {
    const response = await batch(key, {
      match: "external_ids.crm",
      contacts: [
        { name: "Babbage", external_ids: { crm: "C-1" } },
        { name: "Babbage", external_ids: { crm: "C-1" }, phone: "+44 20 7946 0001" },
        { name: "Thief", email: "taken@batch.test", external_ids: { crm: "C-2" } },
        { name: "Other system only", external_ids: { erp: "E-1" } },
      ],
    });
    const [first, second, thief, other] = response.body.data;
    expect(first.status).toBe("created");
    // Two items with one match value apply in input order: the second updates the first.
    expect(second).toMatchObject({
      status: "updated",
      contact: { id: first.contact.id, phone: "+44 20 7946 0001" },
    });
    // The item's error names the holder as the request's would (`Taken`, made by the first test).
    expect(thief.error).toMatchObject({
      code: "email_taken",
      param: "email",
      holder_id: expect.stringMatching(/^con_/),
    });
    expect(thief.error.message).toContain(thief.error.holder_id);
    expect(other.error).toMatchObject({ code: "parameter_missing", param: "external_ids.crm" });
  });

  it("replays the whole batch under the same Idempotency-Key, without writing again", async () => {
    const body = { match: "email", contacts: [{ name: "Idem", email: "idem@batch.test" }] };
    const headers = { "Idempotency-Key": "batch-idem-1" };
    const first = await batch(key, body, headers);
    const again = await batch(key, body, headers);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const found = await api.get("/open/v1/contacts", { key, query: { email: "idem@batch.test" } });
    expect(found.body.data).toHaveLength(1);
    await theEvent(key, "contact.created", found.body.data[0].id);
    const other = await batch(key, { ...body, match: "external_ids.crm" }, headers);
    expect(other.status).toBe(422);
  });
});

describe("batch upsert of contacts refused", () => {
  withWorkspace();

  it("refuses a malformed batch as a whole", async () => {
    const cases: [unknown, string][] = [
      [{ match: "fax", contacts: [{ name: "x" }] }, "match"],
      [{ match: "external_ids.a.b", contacts: [{ name: "x" }] }, "match"],
      [{ match: "email", contacts: [] }, "contacts"],
      [
        { match: "email", contacts: Array.from({ length: 101 }, (_, n) => ({ email: `${n}@x.test` })) },
        "contacts",
      ],
      [{ match: "email", contacts: ["not an object"] }, "contacts[0]"],
      [{ contacts: [{ name: "x" }] }, "match"],
    ];
    for (const [body, param] of cases) {
      const response = await batch(key, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.body.error.param).toBe(param);
    }
  });

  it("needs contacts:write", async () => {
    const { key: readOnly } = await newWorkspace(["contacts:read"]);
    const response = await batch(readOnly, { match: "email", contacts: [{ name: "x", email: "x@x.test" }] });
    expect(response.status).toBe(403);
  });
});

describe("concurrent batches on the same contacts", () => {
  it("create each contact once and lose no update", async () => {
    const { key } = await newWorkspace();
    const emails = Array.from({ length: 30 }, (_, n) => `race-${n}@batch.test`);
    const writers = ["a", "b", "c", "d"];
    const responses = await Promise.all(
      writers.map((writer) =>
        batch(key, {
          match: "email",
          // Each writer sets its own custom field (maps merge per key), in its own order.
          contacts: (writer === "b" ? [...emails].reverse() : emails).map((email) => ({
            name: `Racer ${email}`,
            email,
            custom_fields: { [writer]: true },
          })),
        }),
      ),
    );
    const statuses = responses.flatMap((r) => r.body.data.map((item: { status: string }) => item.status));
    const errors = responses.flatMap((r) =>
      r.body.data.filter((item: { status: string }) => item.status === "error"),
    );
    expect(errors).toEqual([]);
    expect(statuses.filter((s) => s === "created")).toHaveLength(emails.length);

    const ids = await walkPages("/open/v1/contacts", key, { limit: 100 });
    expect(ids).toHaveLength(emails.length);
    for (const id of ids) {
      const { body } = await api.get(`/open/v1/contacts/${id}`, { key });
      expect(body.custom_fields).toEqual({ a: true, b: true, c: true, d: true });
    }
  });
});
