import { beforeAll, describe, expect, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";

let key: string;
beforeAll(async () => {
  ({ key } = await newWorkspace());
});

const create = (body: Record<string, unknown>, headers?: Record<string, string>) =>
  api.post("/open/v1/contacts", { key, body, headers });

describe("create and get", () => {
  it("creates a contact with every field and reads it back", async () => {
    const body = {
      name: "Ada Lovelace",
      email: "ada@example.com",
      phone: "+44 20 7946 0000",
      avatar: "https://cdn.example.com/ada.png",
      website: "https://ada.example.com",
      source: "hubspot",
      status: "active",
      group: "founders",
      gender: "female",
      birthday: "1815-12-10",
      address: { line1: "12 St James's Square", city: "London", postal_code: "SW1Y 4JH", country: "GB" },
      company: "Analytical Engines Ltd",
      tags: ["vip", "math"],
      segments: ["enterprise"],
      lifecycle_stage: "customer",
      preferred_channel: "email",
      preferred_language: "en-GB",
      timezone: "Europe/London",
      do_not_contact: false,
      marketing_consent: true,
      custom_fields: { plan: "pro", seats: 12, beta: true },
      external_ids: { hubspot: "hs-1", salesforce: "0035e00000A" },
    };
    const created = await create(body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...body, object: "contact" });
    expect(created.body.id).toMatch(/^con_/);
    expect(created.body.created_at).toBe(created.body.updated_at);

    const fetched = await api.get(`/open/v1/contacts/${created.body.id}`, { key });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  it("fills unset fields with null, empty arrays, false and empty maps", async () => {
    const { status, body } = await create({ name: "Minimal" });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      email: null,
      tags: [],
      segments: [],
      do_not_contact: false,
      marketing_consent: false,
      custom_fields: {},
      external_ids: {},
      address: null,
    });
  });

  it("a null inside custom_fields on create means not set", async () => {
    const { status, body } = await create({ name: "Nulls", custom_fields: { kept: 1, dropped: null } });
    expect(status).toBe(201);
    expect(body.custom_fields).toEqual({ kept: 1 });
  });

  it("concurrent PATCHes of one contact all apply; none overwrites another", async () => {
    const { body: contact } = await create({ name: "Busy" });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.patch(`/open/v1/contacts/${contact.id}`, { key, body: { custom_fields: { [`k${i}`]: i } } }),
      ),
    );
    for (const result of results) expect(result.status).toBe(200);
    const fetched = await api.get(`/open/v1/contacts/${contact.id}`, { key });
    expect(fetched.body.custom_fields).toEqual({ k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7 });
  });

  it("removes duplicate tags but keeps their order", async () => {
    const { body } = await create({ name: "Tags", tags: ["b", "a", "b"] });
    expect(body.tags).toEqual(["b", "a"]);
  });
});

describe("update", () => {
  it("PATCH changes only the fields sent; null clears; maps merge per key; arrays are replaced", async () => {
    const { body: contact } = await create({
      name: "Grace",
      email: "grace@example.com",
      phone: "+1 555-010-0100",
      tags: ["a", "b"],
      custom_fields: { keep: "yes", drop: 1 },
      external_ids: { crm: "g-1", erp: "e-1" },
    });
    await new Promise((done) => setTimeout(done, 5)); // so a new updated_at is a later instant
    const patched = await api.patch(`/open/v1/contacts/${contact.id}`, {
      key,
      body: {
        phone: null,
        lifecycle_stage: "lead",
        tags: ["c"],
        custom_fields: { drop: null, added: false },
        external_ids: { erp: null, billing: "b-9" },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: "Grace",
      email: "grace@example.com",
      phone: null,
      lifecycle_stage: "lead",
      tags: ["c"],
      custom_fields: { keep: "yes", added: false },
      external_ids: { crm: "g-1", billing: "b-9" },
    });
    expect(patched.body.custom_fields).not.toHaveProperty("drop");
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThan(Date.parse(contact.updated_at));
    expect(patched.body.created_at).toBe(contact.created_at);
    const fetched = await api.get(`/open/v1/contacts/${contact.id}`, { key });
    expect(fetched.body).toEqual(patched.body);
  });

  it("a PATCH that changes nothing returns 200 and keeps updated_at", async () => {
    const { body: contact } = await create({ name: "Same", tags: ["x"] });
    await new Promise((done) => setTimeout(done, 5));
    const patched = await api.patch(`/open/v1/contacts/${contact.id}`, {
      key,
      body: { name: "Same", tags: ["x"], custom_fields: {} },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.updated_at).toBe(contact.updated_at);
  });

  it("an empty PATCH body is a no-op", async () => {
    const { body: contact } = await create({ name: "Empty patch" });
    const patched = await api.patch(`/open/v1/contacts/${contact.id}`, { key, body: {} });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual(contact);
  });
});

describe("delete, and ids that name no contact", () => {
  it("deletes a contact; it is gone afterwards and deleting again is 404", async () => {
    const { body: contact } = await create({ name: "Temp", email: "temp@example.com" });
    const deleted = await api.delete(`/open/v1/contacts/${contact.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: contact.id, object: "contact", deleted: true });
    expect((await api.get(`/open/v1/contacts/${contact.id}`, { key })).status).toBe(404);
    const again = await api.delete(`/open/v1/contacts/${contact.id}`, { key });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("resource_missing");
    // Its email is free again.
    expect((await create({ name: "Temp 2", email: "temp@example.com" })).status).toBe(201);
  });

  it("unknown and malformed ids are 404 resource_missing", async () => {
    for (const id of ["con_0000000000000000000000", "nope", "tkt_0VbeYDRKD1TvDlY414ApAt"]) {
      for (const method of ["get", "patch", "delete"] as const) {
        const response = await api[method](`/open/v1/contacts/${id}`, {
          key,
          ...(method === "patch" ? { body: { name: "x" } } : {}),
        });
        expect(response.status).toBe(404);
        expect(response.body.error).toMatchObject({
          type: "invalid_request_error",
          code: "resource_missing",
        });
      }
    }
  });
});

describe("uniqueness", () => {
  it("email is unique per workspace, case-insensitively; 409 names the existing contact", async () => {
    const { body: first } = await create({ name: "One", email: "Unique@Example.com" });
    const clash = await create({ name: "Two", email: "unique@example.COM" });
    expect(clash.status).toBe(409);
    // As a field (clients need not parse the message) and in the message (people read it).
    expect(clash.body.error).toMatchObject({ code: "email_taken", param: "email", holder_id: first.id });
    expect(clash.body.error.message).toContain(first.id);
  });

  it("email uniqueness applies on PATCH, and a changed email frees the old one", async () => {
    const { body: a } = await create({ name: "A", email: "a-move@example.com" });
    const { body: b } = await create({ name: "B", email: "b-move@example.com" });
    const clash = await api.patch(`/open/v1/contacts/${b.id}`, {
      key,
      body: { email: "A-MOVE@example.com" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({ code: "email_taken", holder_id: a.id });
    const moved = await api.patch(`/open/v1/contacts/${a.id}`, { key, body: { email: "a-new@example.com" } });
    expect(moved.status).toBe(200);
    expect(
      (await api.patch(`/open/v1/contacts/${b.id}`, { key, body: { email: "a-move@example.com" } })).status,
    ).toBe(200);
    const cleared = await api.patch(`/open/v1/contacts/${b.id}`, { key, body: { email: null } });
    expect(cleared.body.email).toBeNull();
    expect((await create({ name: "C", email: "a-move@example.com" })).status).toBe(201);
  });

  it("external ids are unique per workspace and system", async () => {
    const { body: first } = await create({ name: "Ext", external_ids: { crm: "ext-1" } });
    const clash = await create({ name: "Ext 2", external_ids: { crm: "ext-1" } });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({
      code: "external_id_taken",
      param: "external_ids.crm",
      holder_id: first.id,
    });
    expect(clash.body.error.message).toContain(first.id);
    // The same value in another system is another identifier.
    expect((await create({ name: "Ext 3", external_ids: { erp: "ext-1" } })).status).toBe(201);
    // A rejected create claims nothing: its email is still free.
    const partial = await create({
      name: "Ext 4",
      email: "ext4@example.com",
      external_ids: { crm: "ext-1" },
    });
    expect(partial.status).toBe(409);
    expect((await create({ name: "Ext 5", email: "ext4@example.com" })).status).toBe(201);
  });

  it("concurrent creates with one email make exactly one contact", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => create({ name: `Racer ${i}`, email: "racer@example.com" })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
    const list = await api.get("/open/v1/contacts", { key, query: { email: "racer@example.com" } });
    expect(list.body.data).toHaveLength(1);
  });
});
