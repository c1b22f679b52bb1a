import { describe, expect, it } from "vitest";
import { admin, api, newWorkspace } from "./helpers/api.js";

/**
 * Phones in E.164 (contacts/phone.ts): every write stores the number as given beside its E.164
 * form and country, read in the workspace's default country or the request's `phone_country`;
 * the `phone` filter and `match: phone` compare E.164 forms.
 */

const SPELLINGS = ["+1 (555) 010-2030", "+15550102030", "555-010-2030"];

/** A workspace whose settings the admin API set after its creation. */
async function workspaceWith(settings: Record<string, unknown>) {
  const world = await newWorkspace();
  const updated = await admin("PATCH", `/admin/v1/workspaces/${world.workspaceId}`, settings);
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  expect(updated.body).toMatchObject(settings);
  return world;
}

const byPhone = (key: string, phone: string, query: Record<string, string> = {}) =>
  api.get("/open/v1/contacts", { key, query: { phone, ...query } });

describe("phones in E.164: matching and storing", () => {
  it("makes the three spellings one contact under batch upsert with match: phone, found by each", async () => {
    const { key } = await workspaceWith({ default_phone_country: "US" });
    const response = await api.post("/open/v1/contacts/batch", {
      key,
      body: {
        match: "phone",
        contacts: SPELLINGS.map((phone, n) => ({ name: `Spelling ${n}`, phone })),
      },
    });
    expect(response.status).toBe(200);
    const results = response.body.data as { status: string; contact: Record<string, unknown> }[];
    expect(results.map((r) => r.status)).toEqual(["created", "updated", "updated"]);
    const ids = new Set(results.map((r) => r.contact.id));
    expect(ids.size).toBe(1);
    expect(results[2]?.contact).toMatchObject({
      name: "Spelling 2",
      phone: "555-010-2030",
      phone_e164: "+15550102030",
      phone_country: "US",
    });
    for (const spelling of SPELLINGS) {
      const found = await byPhone(key, spelling);
      expect(
        found.body.data.map((c: { id: string }) => c.id),
        spelling,
      ).toEqual([...ids]);
    }
  });

  it("stores the number as given with its E.164 form and country on create and update", async () => {
    const { key } = await newWorkspace();
    const created = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Paris", phone: "+33 6 12 34 56 78" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      phone: "+33 6 12 34 56 78",
      phone_e164: "+33612345678",
      phone_country: "FR",
    });
    // No default country: a national number reads with the request's.
    const patched = await api.patch(`/open/v1/contacts/${created.body.id}`, {
      key,
      body: { phone: "06 12 34 56 79" },
      query: { phone_country: "FR" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ phone_e164: "+33612345679", phone_country: "FR" });
    const cleared = await api.patch(`/open/v1/contacts/${created.body.id}`, { key, body: { phone: null } });
    expect(cleared.body).toMatchObject({ phone: null, phone_e164: null, phone_country: null });
  });
});

describe("phones in E.164: numbers that do not read", () => {
  it("refuses a number that does not read, naming `phone`, in a strict workspace", async () => {
    const { key } = await workspaceWith({ default_phone_country: "US" });
    for (const phone of ["not a phone", "12"]) {
      const response = await api.post("/open/v1/contacts", { key, body: { name: "Bad", phone } });
      expect(response.status, phone).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "phone" });
      expect(response.body.error.message).toContain("not a phone number");
    }
    // Without a default country a national number does not read either, and says what to do.
    const { key: other } = await newWorkspace();
    const national = await api.post("/open/v1/contacts", {
      key: other,
      body: { name: "N", phone: "555-010-2030" },
    });
    expect(national.status).toBe(400);
    expect(national.body.error.message).toContain("phone_country");
    const item = await api.post("/open/v1/contacts/batch", {
      key,
      body: { match: "email", contacts: [{ name: "Bad", email: "bad@phone.test", phone: "nope" }] },
    });
    expect(item.body.data[0]).toMatchObject({ status: "error", error: { param: "phone" } });
    const unknownCountry = await api.post("/open/v1/contacts", {
      key,
      body: { name: "X", phone: "555-010-2030" },
      query: { phone_country: "XX" },
    });
    expect(unknownCountry.status).toBe(400);
    expect(unknownCountry.body.error.param).toBe("phone_country");
  });

  it("keeps a number that does not read as given in a lenient workspace, with no E.164 form", async () => {
    const { key } = await workspaceWith({ phone_validation: "lenient" });
    const response = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Lenient", phone: "ext. 42" },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ phone: "ext. 42", phone_e164: null, phone_country: null });
    const found = await byPhone(key, "ext. 42");
    expect(found.body.data.map((c: { id: string }) => c.id)).toEqual([response.body.id]);
  });
});

describe("phones in E.164: merges and workspace settings", () => {
  it("carries a merged contact's phone with its E.164 form to the survivor", async () => {
    const { key, workspaceId } = await workspaceWith({ default_phone_country: "US" });
    const survivor = await api.post("/open/v1/contacts", { key, body: { name: "Survivor" } });
    const merged = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Merged", phone: "555-010-2031" },
    });
    // The workspace's country changes meanwhile: the merged number keeps the country it was read in.
    await admin("PATCH", `/admin/v1/workspaces/${workspaceId}`, { default_phone_country: "FR" });
    const response = await api.post(`/open/v1/contacts/${survivor.body.id}/merge`, {
      key,
      body: { contact_ids: [merged.body.id] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      phone: "555-010-2031",
      phone_e164: "+15550102031",
      phone_country: "US",
    });
  });

  it("refuses a default country libphonenumber does not know, and shows the settings on create", async () => {
    const created = await admin("POST", "/admin/v1/workspaces", {
      name: "Phones",
      default_phone_country: "FR",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ default_phone_country: "FR", phone_validation: "strict" });
    const refused = await admin("PATCH", `/admin/v1/workspaces/${created.body.id}`, {
      default_phone_country: "ZZ",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe("default_phone_country");
    const missing = await admin("PATCH", "/admin/v1/workspaces/ws_missing", { phone_validation: "lenient" });
    expect(missing.status).toBe(404);
  });
});
