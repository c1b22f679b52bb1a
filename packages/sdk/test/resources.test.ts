// Every resource method against the real server, every answer checked against the spec.
import { admin } from "@deskline/test-kit";
import { beforeAll, describe, expect, it } from "vitest";
import { type Deskline, NotFoundError, PermissionError } from "../src/index.js";
import { workspaceClient } from "./helpers.js";

let deskline: Deskline;
beforeAll(async () => {
  ({ deskline } = await workspaceClient());
});

describe("custom field definitions", () => {
  it("defines, reads, updates and deletes by key; contacts filter on a defined field", async () => {
    const { deskline: own } = await workspaceClient();
    const created = await own.customFieldDefinitions.create({ key: "seats", label: "Seats", type: "number" });
    expect(created).toMatchObject({ object: "custom_field_definition", key: "seats", type: "number" });
    expect(await own.customFieldDefinitions.get("seats")).toEqual(created);
    expect((await own.customFieldDefinitions.list()).data.map((d) => d.key)).toEqual(["seats"]);
    const updated = await own.customFieldDefinitions.update("seats", { label: "Licensed seats" });
    expect(updated.label).toBe("Licensed seats");

    const ten = await own.contacts.create({ name: "Ten", custom_fields: { seats: 10 } });
    await own.contacts.create({ name: "Two", custom_fields: { seats: 2 } });
    const page = await own.contacts.list({ "custom_fields.seats": 10 });
    expect(page.data.map((c) => c.id)).toEqual([ten.id]);

    expect(await own.customFieldDefinitions.delete("seats")).toEqual({
      key: "seats",
      object: "custom_field_definition",
      deleted: true,
    });
    await expect(own.customFieldDefinitions.get("seats")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("contacts", () => {
  it("creates, gets, updates, lists by filter and deletes", async () => {
    const created = await deskline.contacts.create({
      name: "Ada Lovelace",
      email: "ada@example.com",
      tags: ["vip"],
    });
    expect(created).toMatchObject({ object: "contact", name: "Ada Lovelace", email: "ada@example.com" });
    expect(created.id).toMatch(/^con_/);

    expect(await deskline.contacts.get(created.id)).toEqual(created);

    const updated = await deskline.contacts.update(created.id, {
      lifecycle_stage: "customer",
      phone: "+33 1 23 45 67 89",
    });
    expect(updated).toMatchObject({
      id: created.id,
      lifecycle_stage: "customer",
      phone: "+33 1 23 45 67 89",
    });

    const page = await deskline.contacts.list({ email: "ADA@example.com", tag: ["vip"] });
    expect(page).toMatchObject({ object: "list", has_more: false });
    expect(page.data.map((c) => c.id)).toEqual([created.id]);

    expect(await deskline.contacts.delete(created.id)).toEqual({
      id: created.id,
      object: "contact",
      deleted: true,
    });
    await expect(deskline.contacts.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("list() resolves to one page and iterates every item of every page, newest first", async () => {
    const { deskline: own } = await workspaceClient();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await own.contacts.create({ name: `Pager ${i}` })).id);

    const first = await own.contacts.list({ limit: 2 });
    expect(first.data.map((c) => c.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);

    const all: string[] = [];
    for await (const contact of own.contacts.list({ limit: 2 })) all.push(contact.id);
    expect(all).toEqual([...ids].reverse());

    // Filters hold across pages; toArray collects the same walk.
    const named = await own.contacts.list({ limit: 1, search: "pager 1" }).toArray();
    expect(named.map((c) => c.id)).toEqual([ids[1]]);
  });
});

describe("contact sync", () => {
  it("batch() upserts by a match key and answers per item, in input order", async () => {
    const { deskline: own } = await workspaceClient();
    const first = await own.contacts.batch({
      match: "external_ids.crm",
      contacts: [
        { name: "Grace", external_ids: { crm: "G-1" } },
        { name: "Nameless", email: "bad" },
      ],
    });
    expect(first.data.map((r) => r.status)).toEqual(["created", "error"]);
    const again = await own.contacts.batch({
      match: "external_ids.crm",
      contacts: [{ external_ids: { crm: "G-1" }, lifecycle_stage: "customer" }],
    });
    const [result] = again.data;
    expect(result?.status).toBe("updated");
    if (result?.status !== "updated") throw new Error("narrowing");
    expect(result.contact).toMatchObject({ name: "Grace", lifecycle_stage: "customer" });
  });

  it("pull() pages oldest change first with deletions, and list() iterates a pull by its cursor", async () => {
    const { deskline: own } = await workspaceClient();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await own.contacts.create({ name: `Sync ${i}` })).id);
    await own.contacts.delete(ids[0] as string);

    const seen: string[] = [];
    const deleted: string[] = [];
    let cursor = "";
    for await (const page of own.contacts.pull({ updated_after: 0, limit: 2 })) {
      seen.push(...page.data.map((c) => c.id));
      deleted.push(...(page.deleted ?? []).map((t) => t.id));
      cursor = page.next_cursor ?? "";
    }
    expect(seen).toEqual(ids.slice(1));
    expect(deleted).toEqual([ids[0]]);

    // The kept cursor: the next run sees only what changed since.
    await own.contacts.update(ids[2] as string, { lifecycle_stage: "customer" });
    const later = [];
    for await (const contact of own.contacts.list({ cursor, limit: 2 })) later.push(contact.id);
    expect(later).toEqual([ids[2]]);
  });
});

describe("search", () => {
  it("search() finds by typed filter groups and iterates every page by its cursor", async () => {
    const { deskline: own } = await workspaceClient();
    const leads: string[] = [];
    for (let i = 0; i < 3; i++) {
      leads.push((await own.contacts.create({ name: `Lead ${i}`, custom_fields: { seats: 10 + i } })).id);
    }
    await own.contacts.create({ name: "Small", custom_fields: { seats: 2 } });
    const search = own.contacts.search({
      filter_groups: [{ filters: [{ field: "custom_fields.seats", operator: "gte", value: 10 }] }],
      sort: { field: "created_at", direction: "asc" },
      limit: 2,
    });
    const first = await search;
    expect(first).toMatchObject({ object: "list", has_more: true });
    expect(first.next_cursor).toEqual(expect.any(String));
    expect((await search.toArray()).map((c) => c.id)).toEqual(leads);

    const ticket = await own.tickets.create({ subject: "Urgent", priority: "urgent" });
    const urgent = await own.tickets.search({
      filter_groups: [{ filters: [{ field: "priority", operator: "in", values: ["urgent", "high"] }] }],
    });
    expect(urgent.data.map((t) => t.id)).toEqual([ticket.id]);
    expect(urgent.next_cursor).toBeNull();
  });
});

describe("tickets", () => {
  it("creates, gets, solves, lists by status and deletes", async () => {
    const contact = await deskline.contacts.create({ name: "Grace" });
    const ticket = await deskline.tickets.create({
      subject: "Printer on fire",
      priority: "urgent",
      contact_id: contact.id,
    });
    expect(ticket).toMatchObject({
      object: "ticket",
      status: "New",
      priority: "urgent",
      contact_id: contact.id,
    });
    expect(await deskline.tickets.get(ticket.id)).toEqual(ticket);

    const solved = await deskline.tickets.update(ticket.id, { status: "Solved" });
    expect(solved.status).toBe("Solved");
    expect(solved.solved_at).not.toBeNull();

    const listed = await deskline.tickets.list({ status: "Solved", contact_id: contact.id }).toArray();
    expect(listed.map((t) => t.id)).toEqual([ticket.id]);
    expect(await deskline.tickets.list({ status: "New", contact_id: contact.id }).toArray()).toEqual([]);

    expect(await deskline.tickets.delete(ticket.id)).toEqual({
      id: ticket.id,
      object: "ticket",
      deleted: true,
    });
  });
});

describe("webhook endpoints", () => {
  it("creates (with the secret once), gets, updates, rotates the secret, lists (without it) and deletes", async () => {
    const endpoint = await deskline.webhookEndpoints.create({
      url: "https://hooks.deskline-test.invalid/receive",
      events: ["contact.created"],
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const { secret: _secret, ...withoutSecret } = endpoint;
    expect(await deskline.webhookEndpoints.get(endpoint.id)).toEqual(withoutSecret);

    const updated = await deskline.webhookEndpoints.update(endpoint.id, {
      events: ["ticket.created"],
      status: "disabled",
    });
    expect(updated).toMatchObject({ events: ["ticket.created"], status: "disabled" });

    const rotated = await deskline.webhookEndpoints.rotateSecret(endpoint.id, { expires_in: 0 });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect((await deskline.webhookEndpoints.rotateSecret(endpoint.id)).secret).not.toBe(rotated.secret);

    const listed = await deskline.webhookEndpoints.list().toArray();
    expect(listed.map((e) => e.id)).toContain(endpoint.id);
    expect(listed.find((e) => e.id === endpoint.id)).not.toHaveProperty("secret");
    // Nothing was delivered to it (the test server delivers nothing): an empty attempts list.
    expect(await deskline.webhookEndpoints.listAttempts(endpoint.id).toArray()).toEqual([]);
    expect(await deskline.webhookEndpoints.delete(endpoint.id)).toEqual({
      id: endpoint.id,
      object: "webhook_endpoint",
      deleted: true,
    });
  });
});

describe("events", () => {
  // No resource records events on this server yet (the events issue wires contact, ticket and
  // message events), so this checks the calls and their shapes; event bodies are typed from the spec.
  it("lists a workspace's events by type and answers 404 for an unknown one", async () => {
    const { deskline: own } = await workspaceClient();
    const page = await own.events.list({ type: ["contact.created", "ticket.updated"], limit: 5 });
    expect(page).toMatchObject({ object: "list", has_more: false });
    expect(Array.isArray(page.data)).toBe(true);
    await expect(own.events.get("evt_0000000000000000000000")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("reads the event-type catalog: every type with its description, schema and kind", async () => {
    const catalog = await deskline.events.types();
    expect(catalog).toMatchObject({ object: "list", has_more: false });
    const created = catalog.data.find((entry) => entry.type === "contact.created");
    expect(created).toMatchObject({ object: "event_type", operational: false });
    expect(created?.schema).toMatchObject({ type: "object", required: expect.arrayContaining(["data"]) });
  });
});

describe("conversations and messages", () => {
  it("lists, gets, sends and lists messages", async () => {
    const { workspaceId, deskline: own } = await workspaceClient();
    const contact = await own.contacts.create({ name: "Chatty" });
    const created = await admin("POST", `/admin/v1/workspaces/${workspaceId}/conversations`, {
      contact_id: contact.id,
      channel: "chat",
      message: { body: "Hello?" },
    });
    expect(created.status).toBe(201);
    const conversation = await own.conversations.get(created.body.id);
    expect(conversation.contact_id).toBe(contact.id);
    expect((await own.conversations.list({ contact_id: contact.id }).toArray()).map((c) => c.id)).toEqual([
      conversation.id,
    ]);
    const sent = await own.conversations.messages.create(conversation.id, {
      body: "Hi!",
      internal_note: false,
    });
    expect(sent).toMatchObject({ object: "message", direction: "outbound", body: "Hi!" });
    const messages = await own.conversations.messages.list(conversation.id).toArray();
    expect(messages.map((m) => m.direction)).toEqual(["outbound", "inbound"]);
    expect(messages[0]?.id).toBe(sent.id);
  });
});

describe("consoleLinks", () => {
  it("creates a one-time console link for the key's own workspace; without webhooks:manage, a PermissionError", async () => {
    const { workspaceId, deskline: own } = await workspaceClient(["webhooks:manage"]);
    const link = await own.consoleLinks.create();
    expect(link).toMatchObject({ object: "console_session", workspace_id: workspaceId });
    expect(link.url).toMatch(/\/console\/#token=cst_/);
    const short = await own.consoleLinks.create({ expires_in: 120 });
    expect(Date.parse(short.expires_at)).toBeLessThan(Date.parse(link.expires_at));
    const { deskline: reader } = await workspaceClient(["contacts:read"]);
    const refused = await reader.consoleLinks.create().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PermissionError);
    expect((refused as PermissionError).message).toContain("webhooks:manage");
  });
});
