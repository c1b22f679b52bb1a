import { beforeEach, describe, expect, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { openConversation } from "./helpers/conversations.js";
import { runDatabase } from "./helpers/database.js";
import { eventsAbout, theEvent } from "./helpers/events.js";

const database = runDatabase();
let key: string;
let workspaceId: string;

const contact = async (body: Record<string, unknown>) => {
  const response = await api.post("/open/v1/contacts", { key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; updated_at: string } & Record<string, unknown>;
};
const ticket = async (contactId: string, subject: string) =>
  (await api.post("/open/v1/tickets", { key, body: { subject, contact_id: contactId } })).body.id as string;
const merge = (survivorId: string, body: unknown, headers?: Record<string, string>) =>
  api.post(`/open/v1/contacts/${survivorId}/merge`, { key, body, headers });

beforeEach(async () => {
  ({ key, workspaceId } = await newWorkspace());
});

describe("merging contacts: what moves and what the survivor keeps", () => {
  it("moves tickets and conversations, unions and fills the survivor, deletes the others", async () => {
    const survivor = await contact({
      name: "Ada Lovelace",
      email: "ada@example.com",
      tags: ["vip"],
      external_ids: { crm: "1" },
      custom_fields: { plan: "pro" },
    });
    const a = await contact({
      name: "A. Lovelace",
      email: "ada.l@example.com",
      phone: "+44 20 7946 0001",
      tags: ["beta", "vip"],
      external_ids: { erp: "E-1" },
      custom_fields: { plan: "free", seats: 3 },
    });
    const b = await contact({ name: "Ada L", segments: ["emea"], company: "Engines", do_not_contact: true });
    const tickets = [
      await ticket(a.id, "From A"),
      await ticket(b.id, "From B"),
      await ticket(survivor.id, "Own"),
    ];
    const conversation = await openConversation(workspaceId, key, { contactId: a.id });

    const response = await merge(survivor.id, { contact_ids: [a.id, b.id] });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      id: survivor.id,
      name: "Ada Lovelace",
      email: "ada@example.com",
      phone: "+44 20 7946 0001",
      company: "Engines",
      tags: ["vip", "beta"],
      segments: ["emea"],
      do_not_contact: true,
      external_ids: { crm: "1", erp: "E-1" },
      custom_fields: { plan: "pro", seats: 3 },
    });
    expect(await api.get(`/open/v1/contacts/${survivor.id}`, { key })).toMatchObject({ body: response.body });

    for (const id of [a.id, b.id])
      expect((await api.get(`/open/v1/contacts/${id}`, { key })).status).toBe(404);
    const listed = await api.get("/open/v1/tickets", { key, query: { contact_id: survivor.id } });
    expect(listed.body.data.map((t: { id: string }) => t.id).sort()).toEqual([...tickets].sort());
    const moved = await api.get(`/open/v1/conversations/${conversation.id}`, { key });
    expect(moved.body.contact_id).toBe(survivor.id);

    // Events: the survivor's contact.updated with what it had; a ticket.updated per moved ticket.
    const updated = await theEvent(key, "contact.updated", survivor.id);
    expect(updated.data).toEqual(response.body);
    expect(updated.previous_attributes).toMatchObject({
      phone: null,
      tags: ["vip"],
      external_ids: { crm: "1" },
      do_not_contact: false,
    });
    const movedEvent = await theEvent(key, "ticket.updated", tickets[0] as string);
    expect(movedEvent.previous_attributes).toEqual({ contact_id: a.id });

    // A pull learns where the merged contacts went.
    const pull = await api.get("/open/v1/contacts", { key, query: { updated_after: "0", limit: 100 } });
    expect(
      pull.body.deleted.map((t: { id: string; merged_into: string }) => [t.id, t.merged_into]).sort(),
    ).toEqual(
      [
        [a.id, survivor.id],
        [b.id, survivor.id],
      ].sort(),
    );
    // The released email and external id live on the survivor now, and are unique there.
    const taken = await api.post("/open/v1/contacts", {
      key,
      body: { name: "X", external_ids: { erp: "E-1" } },
    });
    expect(taken.body.error).toMatchObject({ code: "external_id_taken" });
  });
});

describe("merging contacts: conflicts, repeats and interrupted merges", () => {
  it("refuses different values of one external-id system with 409 naming them, unless `prefer` decides", async () => {
    const survivor = await contact({ name: "S", external_ids: { crm: "1", erp: "E" } });
    const other = await contact({ name: "O", external_ids: { crm: "2", zendesk: "Z" } });
    const theirs = await ticket(other.id, "Stays put on a conflict");

    const refused = await merge(survivor.id, { contact_ids: [other.id] });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "merge_conflict", param: "external_ids.crm" });
    expect(refused.body.error.message).toContain(`${survivor.id} has '1'`);
    expect(refused.body.error.message).toContain(`${other.id} has '2'`);
    // Nothing moved.
    expect((await api.get(`/open/v1/contacts/${other.id}`, { key })).body).toEqual(other);
    expect((await api.get(`/open/v1/tickets/${theirs}`, { key })).body.contact_id).toBe(other.id);

    const preferred = await merge(survivor.id, { contact_ids: [other.id], prefer: other.id });
    expect(preferred.status).toBe(200);
    expect(preferred.body.external_ids).toEqual({ crm: "2", erp: "E", zendesk: "Z" });

    const kept = await contact({ name: "K", external_ids: { crm: "3" } });
    const survivorWins = await merge(survivor.id, { contact_ids: [kept.id], prefer: survivor.id });
    expect(survivorWins.body.external_ids.crm).toBe("2");
  });

  it("is safe to repeat, and completes a merge a crash interrupted", async () => {
    const survivor = await contact({ name: "S", tags: ["s"] });
    const done = await contact({ name: "Done", tags: ["d"] });
    const first = await merge(survivor.id, { contact_ids: [done.id] });
    expect(first.status).toBe(200);
    const again = await merge(survivor.id, { contact_ids: [done.id] });
    expect(again.body).toEqual(first.body);
    expect(await eventsAbout(key, survivor.id, "contact.updated")).toHaveLength(1);

    // A crash after step 2: the contact gave up its keys and is marked, nothing else happened.
    const half = await contact({ name: "Half", email: "half@example.com", tags: ["h"] });
    const halfTicket = await ticket(half.id, "Half's");
    const db = await database();
    await db
      .collection<{ _id: string }>("contacts")
      .updateOne({ _id: half.id }, { $set: { merged_into: survivor.id }, $unset: { unique_keys: "" } });
    // The retry names an already merged contact too: it counts as merged.
    const resumed = await merge(survivor.id, { contact_ids: [done.id, half.id] });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ email: "half@example.com", tags: ["s", "d", "h"] });
    expect((await api.get(`/open/v1/tickets/${halfTicket}`, { key })).body.contact_id).toBe(survivor.id);
    expect((await api.get(`/open/v1/contacts/${half.id}`, { key })).status).toBe(404);
  });
});

describe("merging contacts: requests refused", () => {
  it("answers 400 for a survivor among the merged, a foreign `prefer` or unknown `contact_ids`, 404 for an unknown survivor, 403 without contacts:write", async () => {
    const survivor = await contact({ name: "S" });
    const other = await contact({ name: "O" });
    const itself = await merge(survivor.id, { contact_ids: [survivor.id] });
    expect(itself.body.error).toMatchObject({ code: "parameter_invalid", param: "contact_ids" });
    const stranger = await merge(survivor.id, {
      contact_ids: [other.id],
      prefer: "con_0000000000000000000000",
    });
    expect(stranger.body.error).toMatchObject({ code: "parameter_invalid", param: "prefer" });
    const unknown = await merge(survivor.id, { contact_ids: ["con_0000000000000000000000"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: "parameter_invalid", param: "contact_ids" });
    expect(unknown.body.error.message).toContain("con_0000000000000000000000");
    expect((await merge("con_0000000000000000000000", { contact_ids: [other.id] })).status).toBe(404);
    expect((await merge(survivor.id, { contact_ids: [] })).status).toBe(400);

    const { key: foreignKey } = await newWorkspace();
    const foreign = await api.post("/open/v1/contacts", { key: foreignKey, body: { name: "F" } });
    const elsewhere = await merge(survivor.id, { contact_ids: [foreign.body.id] });
    expect(elsewhere.body.error).toMatchObject({ code: "parameter_invalid", param: "contact_ids" });

    const { key: readOnly } = await newWorkspace(["contacts:read"]);
    const forbidden = await api.post(`/open/v1/contacts/${survivor.id}/merge`, {
      key: readOnly,
      body: { contact_ids: [other.id] },
    });
    expect(forbidden.status).toBe(403);
    expect((await api.get(`/open/v1/contacts/${other.id}`, { key })).status).toBe(200);
  });
});
