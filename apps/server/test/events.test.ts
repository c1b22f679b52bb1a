import { beforeAll, describe, expect, it } from "vitest";
import { newEvent, type StoredEvent } from "../src/events/model.js";
import { api, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";
import { allEvents, eventsAbout, theEvent } from "./helpers/events.js";

// One test per event type: the change goes through the API, the event is read back through the
// events API, and its `data` must be exactly what the API answered for the change.

const database = runDatabase();
let key: string;
beforeAll(async () => {
  ({ key } = await newWorkspace());
});

const createContact = async (body: Record<string, unknown>, k = key, headers?: Record<string, string>) => {
  const response = await api.post("/open/v1/contacts", { key: k, body, headers });
  expect(response.status).toBe(201);
  return response;
};

describe("contact events", () => {
  it("contact.created carries the contact as createContact answered it", async () => {
    const created = await createContact({ name: "Ada", email: "ada.events@example.com", tags: ["vip"] });
    const event = await theEvent(key, "contact.created", created.body.id);
    expect(event.data).toEqual(created.body);
    expect(event).not.toHaveProperty("previous_attributes");
  });

  it("contact.updated carries the contact after the PATCH and the old values of what changed", async () => {
    const created = await createContact({
      name: "Grace",
      lifecycle_stage: "lead",
      tags: ["a"],
      custom_fields: { plan: "free", seats: 3 },
    });
    const path = `/open/v1/contacts/${created.body.id}`;
    const patched = await api.patch(path, {
      key,
      body: { lifecycle_stage: "customer", tags: ["a", "b"], custom_fields: { plan: "pro" }, name: "Grace" },
    });
    expect(patched.status).toBe(200);
    const event = await theEvent(key, "contact.updated", created.body.id);
    expect(event.data).toEqual(patched.body);
    // `name` was sent unchanged: not a change. Maps show their whole old value.
    expect(event.previous_attributes).toEqual({
      lifecycle_stage: "lead",
      tags: ["a"],
      custom_fields: { plan: "free", seats: 3 },
    });
  });

  it("a PATCH that changes nothing emits nothing", async () => {
    const created = await createContact({ name: "Same", tags: ["x"], custom_fields: { a: 1 } });
    const path = `/open/v1/contacts/${created.body.id}`;
    for (const body of [
      {},
      { name: "Same" },
      { tags: ["x"], custom_fields: { a: 1 } },
      { custom_fields: { b: null } },
    ]) {
      const response = await api.patch(path, { key, body });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(created.body);
    }
    expect(await eventsAbout(key, created.body.id, "contact.updated")).toEqual([]);
  });

  it("an idempotent replay emits no second contact.created", async () => {
    const headers = { "Idempotency-Key": `events-replay-${Date.now()}` };
    const first = await createContact({ name: "Once" }, key, headers);
    const replay = await createContact({ name: "Once" }, key, headers);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(first.body.id);
    await theEvent(key, "contact.created", first.body.id);
  });

  it("a contact deleted right after a change keeps its events", async () => {
    const created = await createContact({ name: "Short-lived" });
    const path = `/open/v1/contacts/${created.body.id}`;
    await api.patch(path, { key, body: { name: "Shorter-lived" } });
    expect((await api.delete(path, { key })).status).toBe(200);
    const events = await eventsAbout(key, created.body.id);
    expect(events.map((e) => e.type)).toEqual(["contact.created", "contact.updated"]);
  });
});

describe("ticket events", () => {
  it("ticket.created carries the ticket as createTicket answered it", async () => {
    const created = await api.post("/open/v1/tickets", {
      key,
      body: { subject: "Printer on fire", priority: "urgent", due_at: "2030-01-02T03:04:05.000Z" },
    });
    expect(created.status).toBe(201);
    const event = await theEvent(key, "ticket.created", created.body.id);
    expect(event.data).toEqual(created.body);
    expect(event).not.toHaveProperty("previous_attributes");
  });

  it("ticket.updated carries the ticket after the PATCH, with the old status and stamps", async () => {
    const created = await api.post("/open/v1/tickets", {
      key,
      body: { subject: "Refund", due_at: "2030-01-02T03:04:05.000Z" },
    });
    const path = `/open/v1/tickets/${created.body.id}`;
    const solved = await api.patch(path, { key, body: { status: "Solved", due_at: null } });
    expect(solved.status).toBe(200);
    const event = await theEvent(key, "ticket.updated", created.body.id);
    expect(event.data).toEqual(solved.body);
    expect(event.previous_attributes).toEqual({
      status: "New",
      due_at: "2030-01-02T03:04:05.000Z",
      solved_at: null,
    });
  });

  it("no event for a PATCH that changes nothing, nor for a refused status move", async () => {
    const created = await api.post("/open/v1/tickets", { key, body: { subject: "Done", status: "Closed" } });
    const path = `/open/v1/tickets/${created.body.id}`;
    expect((await api.patch(path, { key, body: { status: "Closed", subject: "Done" } })).status).toBe(200);
    expect((await api.patch(path, { key, body: { status: "New" } })).status).toBe(409);
    expect(await eventsAbout(key, created.body.id, "ticket.updated")).toEqual([]);
  });
});

describe("the events API: lists, filters and lookups", () => {
  it("lists newest first, filters by repeated type and by created bounds, and pages", async () => {
    const { key: own } = await newWorkspace();
    const contact = (await createContact({ name: "Listed" }, own)).body;
    await api.patch(`/open/v1/contacts/${contact.id}`, { key: own, body: { name: "Listed 2" } });
    const ticket = (await api.post("/open/v1/tickets", { key: own, body: { subject: "Listed" } })).body;

    const all = await allEvents(own);
    expect(all.map((e) => [e.type, e.data.id])).toEqual([
      ["ticket.created", ticket.id],
      ["contact.updated", contact.id],
      ["contact.created", contact.id],
    ]);
    const ids = all.map((e) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);

    const contactsOnly = await allEvents(own, { type: ["contact.created", "contact.updated"] });
    expect(contactsOnly.map((e) => e.id)).toEqual(ids.slice(1));

    const created = all[2]?.created as number;
    expect(await allEvents(own, { created_after: String(created - 1) })).toHaveLength(3);
    expect(await allEvents(own, { created_before: String(created) })).toEqual([]);
    const rfc3339 = new Date((created + 3600) * 1000).toISOString();
    expect(await allEvents(own, { created_after: rfc3339 })).toEqual([]);

    const first = await api.get("/open/v1/events", { key: own, query: { limit: 2 } });
    expect(first.body.has_more).toBe(true);
    const second = await api.get("/open/v1/events", {
      key: own,
      query: { limit: 2, starting_after: first.body.data[1].id },
    });
    expect([...first.body.data, ...second.body.data].map((e: { id: string }) => e.id)).toEqual(ids);
    expect(second.body.has_more).toBe(false);
  });

  it.each([
    [{ type: "contact.deleted" }, "type"],
    [{ created_after: "yesterday" }, "created_after"],
    [{ starting_after: "con_0000000000000000000000" }, "starting_after"],
    [{ limit: "101" }, "limit"],
    [{ since: "1" }, "since"],
  ])("refuses the query %j with 400 naming %s", async (query, param) => {
    const response = await api.get("/open/v1/events", { key, query });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toMatch(new RegExp(`^${param}`));
  });

  it("an unknown event id is 404", async () => {
    const response = await api.get("/open/v1/events/evt_0000000000000000000000", { key });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("resource_missing");
  });
});

describe("the events API: retention and workspaces", () => {
  it("an event past retention is missing from every read (get, list, deliveries, resend) before the sweep removes it", async () => {
    const { workspaceId, key: own } = await newWorkspace();
    const db = await database();
    const events = db.collection<StoredEvent>("events");
    // Written straight into the database as a relay records them: one a day past the default
    // EVENT_RETENTION_DAYS of 30 (the hourly sweep has not run yet), one a day inside it.
    // The contact the events carry is a real one, so the answers match the spec's event shape.
    const contact = (await createContact({ name: "Aged" }, own)).body;
    const day = 86_400_000;
    const at = (daysAgo: number) =>
      newEvent(workspaceId, "contact.created", contact, undefined, new Date(Date.now() - daysAgo * day));
    const [aged, kept] = [at(31), at(29)];
    await events.insertMany([aged, kept]);

    const answers = [
      await api.get(`/open/v1/events/${aged._id}`, { key: own }),
      await api.get(`/open/v1/events/${aged._id}/deliveries`, { key: own }),
      await api.post(`/open/v1/events/${aged._id}/resend`, { key: own, body: {} }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe("resource_missing");
    }
    // Every way of listing shows the kept event and not the aged one: plain, by type, from the
    // epoch, and from a cursor at the kept event (the aged one is the only older event).
    const queries: Record<string, string>[] = [{}, { type: "contact.created" }, { created_after: "0" }];
    for (const query of queries) {
      const listed = (await allEvents(own, query)).map((event) => event.id);
      expect(listed).toContain(kept._id);
      expect(listed).not.toContain(aged._id);
    }
    const after = await api.get("/open/v1/events", { key: own, query: { starting_after: kept._id } });
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual([]);

    // The kept one reads through every route.
    expect((await api.get(`/open/v1/events/${kept._id}`, { key: own })).status).toBe(200);
    expect((await api.get(`/open/v1/events/${kept._id}/deliveries`, { key: own })).status).toBe(200);
  });

  it("events of one workspace are never visible to another", async () => {
    const { key: theirs } = await newWorkspace();
    const { key: mine } = await newWorkspace();
    const contact = (await createContact({ name: "Private" }, theirs)).body;
    const event = await theEvent(theirs, "contact.created", contact.id);
    expect(await allEvents(mine)).toEqual([]);
    expect(await allEvents(mine, { type: ["contact.created"], created_after: "0" })).toEqual([]);
    const foreign = await api.get(`/open/v1/events/${event.id}`, { key: mine });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("resource_missing");
    const cursor = await api.get("/open/v1/events", { key: mine, query: { starting_after: event.id } });
    expect(cursor.body.data).toEqual([]);
  });
});
