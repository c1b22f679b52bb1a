// The ticket operations over HTTP: create, get, update and delete, the status machine (every move,
// its stamps and refusals), links to contacts and conversations, list filters and cursor paging,
// scopes, workspace isolation, request validation and idempotent creates, each answer checked
// against the spec.
import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/platform/ids.js";
import { TICKET_STATUSES, type TicketStatus } from "../src/tickets/status-transitions.js";
import { api, newKey, newWorkspace } from "./helpers/api.js";
import { newContact, openConversation } from "./helpers/conversations.js";
import { expectInsufficientScope, expectSameAsMissing } from "./helpers/expect.js";
import { walkPages } from "./helpers/paging.js";
import { sharedBeforeAll } from "./helpers/shared-setup.js";

type Query = Record<string, string | number | boolean | string[]>;
type Ticket = Record<string, any> & { id: string; subject: string; status: TicketStatus };

let key: string;
let workspaceId: string;
let theirKey: string;
let theirWorkspaceId: string;

beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
  ({ key: theirKey, workspaceId: theirWorkspaceId } = await newWorkspace());
});

/** A conversation of the workspace, opened through the admin API as a channel would. */
async function openConversationIn(inWorkspace: string): Promise<string> {
  const withKey = inWorkspace === workspaceId ? key : theirKey;
  return (await openConversation(inWorkspace, withKey)).id;
}

async function createTicket(body: Record<string, unknown>, withKey = key): Promise<Ticket> {
  const response = await api.post("/open/v1/tickets", { key: withKey, body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

const patchTicket = (id: string, body: unknown, withKey = key) =>
  api.patch(`/open/v1/tickets/${id}`, { key: withKey, body });

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("create and get", () => {
  it("creates a ticket with every field and reads it back", async () => {
    const contactId = await newContact(key);
    const conversationId = await openConversationIn(workspaceId);
    const body = {
      subject: "Invoice shows the wrong VAT number",
      type: "question",
      priority: "high",
      status: "On you",
      category: "billing",
      sentiment: "negative",
      contact_id: contactId,
      conversation_id: conversationId,
      assignee_id: "agent_42",
      tags: ["vat", "invoices"],
      notes: "Customer needs a corrected invoice before month end.",
      language: "en-GB",
      due_at: "2026-03-06T19:00:00+02:00",
    };
    const created = await api.post("/open/v1/tickets", { key, body });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ...body,
      id: expect.stringMatching(/^tkt_[0-9A-Za-z]{22}$/),
      object: "ticket",
      // Times come back in UTC with milliseconds, whatever offset they were sent with.
      due_at: "2026-03-06T17:00:00.000Z",
      solved_at: null,
      closed_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(created.body.created_at).toBe(created.body.updated_at);

    const fetched = await api.get(`/open/v1/tickets/${created.body.id}`, { key });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  it("only subject is required: status defaults to New, every other field is null or []", async () => {
    const ticket = await createTicket({ subject: "Cannot log in" });
    expect(ticket).toMatchObject({
      subject: "Cannot log in",
      status: "New",
      type: null,
      priority: null,
      category: null,
      sentiment: null,
      contact_id: null,
      conversation_id: null,
      assignee_id: null,
      tags: [],
      notes: null,
      language: null,
      due_at: null,
      solved_at: null,
      closed_at: null,
    });
  });

  it("null on create means unset; a null status is New", async () => {
    const ticket = await createTicket({ subject: "Nulls", status: null, tags: null, priority: null });
    expect(ticket).toMatchObject({ status: "New", tags: [], priority: null });
  });

  it("removes duplicate tags but keeps their order", async () => {
    const ticket = await createTicket({ subject: "Tags", tags: ["b", "a", "b"] });
    expect(ticket.tags).toEqual(["b", "a"]);
  });
});

describe("update", () => {
  it("PATCH changes only the fields sent; null clears; tags are replaced whole", async () => {
    const ticket = await createTicket({
      subject: "Printer on fire",
      priority: "low",
      category: "hardware",
      assignee_id: "agent_1",
      tags: ["a", "b"],
      notes: "smells",
      due_at: "2026-05-01T10:00:00Z",
    });
    await pause(5);
    const patched = await patchTicket(ticket.id, {
      priority: "urgent",
      assignee_id: null,
      due_at: null,
      tags: ["c"],
      sentiment: "negative",
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...ticket,
      priority: "urgent",
      assignee_id: null,
      due_at: null,
      tags: ["c"],
      sentiment: "negative",
      updated_at: expect.any(String),
    });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThan(Date.parse(ticket.updated_at));
    expect((await api.get(`/open/v1/tickets/${ticket.id}`, { key })).body).toEqual(patched.body);

    const cleared = await patchTicket(ticket.id, { tags: null, category: null, notes: null });
    expect(cleared.body).toMatchObject({ tags: [], category: null, notes: null, subject: "Printer on fire" });
  });

  it("a PATCH that changes nothing returns 200 and leaves updated_at", async () => {
    const ticket = await createTicket({
      subject: "Same",
      tags: ["x"],
      priority: "normal",
      due_at: "2026-05-01T10:00:00.000Z",
    });
    await pause(5);
    for (const body of [
      {},
      { subject: "Same", tags: ["x"], priority: "normal", status: "New" },
      // The same instant written another way is the same value.
      { due_at: "2026-05-01T12:00:00+02:00", type: null, contact_id: null },
    ]) {
      const patched = await patchTicket(ticket.id, body);
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual(ticket);
    }
  });
});

describe("delete, and ids that name no ticket", () => {
  it("deletes a ticket; it is gone afterwards and deleting again is 404", async () => {
    const ticket = await createTicket({ subject: "Delete me", status: "Closed" });
    const deleted = await api.delete(`/open/v1/tickets/${ticket.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: ticket.id, object: "ticket", deleted: true });
    for (const response of [
      await api.get(`/open/v1/tickets/${ticket.id}`, { key }),
      await patchTicket(ticket.id, { subject: "Back?" }),
      await api.delete(`/open/v1/tickets/${ticket.id}`, { key }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: "resource_missing", param: "id" });
    }
  });

  it("unknown and malformed ids are 404 resource_missing", async () => {
    for (const id of [newId("tkt"), "tkt_nope", "con_2bXkq9TmR4vN8sLwAAAAAA", "%20"]) {
      const response = await api.get(`/open/v1/tickets/${id}`, { key });
      expect(response.status, id).toBe(404);
      expect(response.body.error.code).toBe("resource_missing");
    }
  });
});

// One workspace for the status machine's blocks.
let machineKey: string;
const withMachineWorkspace = sharedBeforeAll(async () => {
  ({ key: machineKey } = await newWorkspace());
});

// Written out by hand from docs/design.md, Ticket status, rather than imported from the module under test.
const OPEN = ["New", "On you", "On customer", "On hold"];
const allowed = (from: TicketStatus, to: TicketStatus) =>
  from === to || OPEN.includes(from) || (from === "Solved" && to === "Closed");
const stampedBy = (status: TicketStatus) =>
  status === "Solved" ? "solved_at" : status === "Closed" || status === "Cancelled" ? "closed_at" : undefined;

describe("the status machine over HTTP: every move, and creating in a final status", () => {
  withMachineWorkspace();
  const cases = TICKET_STATUSES.flatMap((from) => TICKET_STATUSES.map((to) => [from, to] as const));

  it.each(cases)("%s → %s", async (from, to) => {
    const ticket = await createTicket({ subject: `${from} to ${to}`, status: from }, machineKey);
    await pause(2);
    const response = await patchTicket(ticket.id, { status: to }, machineKey);
    const stored = (await api.get(`/open/v1/tickets/${ticket.id}`, { key: machineKey })).body;

    if (!allowed(from, to)) {
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({
        type: "invalid_request_error",
        code: "ticket_status_terminal",
        param: "status",
      });
      expect(response.body.error.message).toContain(`from '${from}' to '${to}'`);
      expect(stored).toEqual(ticket);
      return;
    }

    expect(response.status).toBe(200);
    expect(response.body).toEqual(stored);
    if (from === to) {
      expect(stored).toEqual(ticket);
      return;
    }
    expect(stored.status).toBe(to);
    expect(Date.parse(stored.updated_at)).toBeGreaterThan(Date.parse(ticket.updated_at));
    // A stamp set before stays exactly; entering a status stamps the moment of the move.
    for (const stamp of ["solved_at", "closed_at"] as const) {
      const expected = ticket[stamp] ?? (stampedBy(to) === stamp ? stored.updated_at : null);
      expect(stored[stamp], stamp).toBe(expected);
    }
  });

  it.each(["Solved", "Closed", "Cancelled"] as const)("creating directly in %s stamps it", async (status) => {
    const ticket = await createTicket({ subject: `Born ${status}`, status }, machineKey);
    expect(ticket.status).toBe(status);
    const stamp = stampedBy(status) as string;
    const other = stamp === "solved_at" ? "closed_at" : "solved_at";
    expect(ticket[stamp]).toBe(ticket.created_at);
    expect(ticket[other]).toBeNull();
  });
});

describe("the status machine over HTTP: stamps, refusals and races", () => {
  withMachineWorkspace();

  it("Solved → Closed keeps solved_at where it was and stamps closed_at", async () => {
    const ticket = await createTicket({ subject: "Two stamps" }, machineKey);
    const solved = (await patchTicket(ticket.id, { status: "Solved" }, machineKey)).body;
    await pause(5);
    const closed = (await patchTicket(ticket.id, { status: "Closed" }, machineKey)).body;
    expect(closed.solved_at).toBe(solved.solved_at);
    expect(Date.parse(closed.closed_at)).toBeGreaterThan(Date.parse(solved.solved_at));
  });

  it("the 409 says what is allowed, and a refused PATCH changes none of its other fields", async () => {
    const ticket = await createTicket(
      { subject: "Solved already", status: "Solved", priority: "low" },
      machineKey,
    );
    const response = await patchTicket(ticket.id, { status: "On you", priority: "urgent" }, machineKey);
    expect(response.status).toBe(409);
    expect(response.body.error.message).toBe(
      "Cannot move the ticket from 'Solved' to 'On you': a Solved ticket can only move to 'Closed'.",
    );
    expect((await api.get(`/open/v1/tickets/${ticket.id}`, { key: machineKey })).body).toEqual(ticket);
  });

  it("terminal tickets still take changes to other fields", async () => {
    const ticket = await createTicket({ subject: "Closed", status: "Closed" }, machineKey);
    const response = await patchTicket(ticket.id, { notes: "post-mortem", status: "Closed" }, machineKey);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      notes: "post-mortem",
      status: "Closed",
      closed_at: ticket.closed_at,
    });
  });

  it("racing status changes cannot combine into a forbidden move", async () => {
    for (let round = 0; round < 5; round++) {
      const ticket = await createTicket({ subject: `Race ${round}` }, machineKey);
      const [solve, cancel] = await Promise.all([
        patchTicket(ticket.id, { status: "Solved" }, machineKey),
        patchTicket(ticket.id, { status: "Cancelled" }, machineKey),
      ]);
      // Whichever lands first makes the ticket terminal; the other is refused.
      expect([solve.status, cancel.status].sort()).toEqual([200, 409]);
      const stored = (await api.get(`/open/v1/tickets/${ticket.id}`, { key: machineKey })).body;
      if (solve.status === 200) expect(stored).toMatchObject({ status: "Solved", closed_at: null });
      else expect(stored).toMatchObject({ status: "Cancelled", solved_at: null });
    }
  });
});

describe("contact_id and conversation_id", () => {
  let contactId: string;
  let conversationId: string;
  let theirContactId: string;
  let theirConversationId: string;
  beforeAll(async () => {
    contactId = await newContact(key, "Own contact");
    conversationId = await openConversationIn(workspaceId);
    theirContactId = await newContact(theirKey, "Their contact");
    theirConversationId = await openConversationIn(theirWorkspaceId);
  });

  it("accepts the workspace's own contact and conversation on create and PATCH, and null clears them", async () => {
    const ticket = await createTicket({
      subject: "Linked",
      contact_id: contactId,
      conversation_id: conversationId,
    });
    expect(ticket).toMatchObject({ contact_id: contactId, conversation_id: conversationId });
    const other = await createTicket({ subject: "Linked later" });
    const linked = await patchTicket(other.id, { contact_id: contactId, conversation_id: conversationId });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ contact_id: contactId, conversation_id: conversationId });
    const unlinked = await patchTicket(other.id, { contact_id: null, conversation_id: null });
    expect(unlinked.body).toMatchObject({ contact_id: null, conversation_id: null });
  });

  it.each([
    ["contact_id", "foreign", () => theirContactId],
    ["contact_id", "unknown", () => newId("con")],
    ["conversation_id", "foreign", () => theirConversationId],
    ["conversation_id", "unknown", () => newId("conv")],
  ] as const)("a %s that is %s is 400 parameter_invalid on create and PATCH", async (param, _kind, idOf) => {
    const id = idOf();
    const existing = await createTicket({ subject: "Target" });
    for (const response of [
      await api.post("/open/v1/tickets", { key, body: { subject: "Bad link", [param]: id } }),
      await patchTicket(existing.id, { [param]: id }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param });
      // A foreign id and a nonexistent one get the same words, so ids cannot be probed.
      const noun = param === "contact_id" ? "contact" : "conversation";
      expect(response.body.error.message).toBe(
        `\`${param}\` must be the id of a ${noun} in this workspace; '${id}' is not one.`,
      );
    }
    expect((await api.get(`/open/v1/tickets/${existing.id}`, { key })).body).toEqual(existing);
  });

  it("a ticket keeps the id of a contact deleted since, and a PATCH may send it back unchanged", async () => {
    const doomed = await newContact(key, "Leaving");
    const ticket = await createTicket({ subject: "Orphan", contact_id: doomed });
    expect((await api.delete(`/open/v1/contacts/${doomed}`, { key })).status).toBe(200);
    expect((await api.get(`/open/v1/tickets/${ticket.id}`, { key })).body.contact_id).toBe(doomed);
    const echoed = await patchTicket(ticket.id, { contact_id: doomed, priority: "high" });
    expect(echoed.status).toBe(200);
    expect(echoed.body).toMatchObject({ contact_id: doomed, priority: "high" });
    // Pointing another ticket at it is a change, and the contact no longer exists.
    const other = await createTicket({ subject: "Too late" });
    expect((await patchTicket(other.id, { contact_id: doomed })).status).toBe(400);
  });
});

// Five tickets, four of them on two contacts, in a workspace of their own for the list filters' blocks.
let listKey: string;
const t: Record<string, Ticket> = {};
let conA: string;
let conB: string;

const withListFixtures = sharedBeforeAll(async () => {
  ({ key: listKey } = await newWorkspace());
  conA = await newContact(listKey, "A");
  conB = await newContact(listKey, "B");
  const fixtures: Record<string, Record<string, unknown>> = {
    T1: { status: "New", priority: "high", category: "auth", contact_id: conA, tags: ["vip", "login"] },
    T2: { status: "On you", priority: "urgent", category: "billing", contact_id: conA, tags: ["vip"] },
    T3: {
      status: "New",
      priority: "low",
      category: "billing",
      contact_id: conB,
      tags: ["login", "refund"],
    },
    T4: { status: "Solved", priority: "high", category: "auth", tags: ["vip", "login"] },
    T5: { status: "Cancelled", contact_id: conB },
  };
  for (const [subject, fields] of Object.entries(fixtures)) {
    t[subject] = await createTicket({ subject, ...fields }, listKey);
    await pause(3); // distinct created_at instants for the exclusive time bounds
  }
});

async function subjects(query: Query): Promise<string[]> {
  const response = await api.get("/open/v1/tickets", { key: listKey, query: { limit: 100, ...query } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.map((ticket: Ticket) => ticket.subject);
}

describe("list filters: each alone", () => {
  withListFixtures();

  it("lists newest first with the list envelope", async () => {
    const response = await api.get("/open/v1/tickets", { key: listKey });
    expect(response.body).toMatchObject({ object: "list", has_more: false });
    expect(response.body.data[0]).toEqual(t.T5);
    expect(await subjects({})).toEqual(["T5", "T4", "T3", "T2", "T1"]);
  });

  it.each<[string, () => Query, string[]]>([
    ["status New", () => ({ status: "New" }), ["T3", "T1"]],
    ["status On you (a space in the value)", () => ({ status: "On you" }), ["T2"]],
    ["status Solved", () => ({ status: "Solved" }), ["T4"]],
    ["status Cancelled", () => ({ status: "Cancelled" }), ["T5"]],
    ["status nobody has", () => ({ status: "On hold" }), []],
    ["priority high", () => ({ priority: "high" }), ["T4", "T1"]],
    ["priority urgent", () => ({ priority: "urgent" }), ["T2"]],
    ["category billing", () => ({ category: "billing" }), ["T3", "T2"]],
    ["category is exact", () => ({ category: "bill" }), []],
    ["contact_id", () => ({ contact_id: conA }), ["T2", "T1"]],
    ["another contact_id", () => ({ contact_id: conB }), ["T5", "T3"]],
    ["one tag", () => ({ tag: "vip" }), ["T4", "T2", "T1"]],
    ["two tags, both must match", () => ({ tag: ["vip", "login"] }), ["T4", "T1"]],
    ["two tags nobody has together", () => ({ tag: ["vip", "refund"] }), []],
    ["created_after (RFC 3339, exclusive)", () => ({ created_after: t.T3?.created_at }), ["T5", "T4"]],
    ["created_before (RFC 3339, exclusive)", () => ({ created_before: t.T3?.created_at }), ["T2", "T1"]],
    [
      "created_after in Unix seconds",
      () => ({ created_after: unix(t.T1?.created_at) - 1 }),
      ["T5", "T4", "T3", "T2", "T1"],
    ],
    [
      "created_before in Unix seconds",
      () => ({ created_before: unix(t.T5?.created_at) + 1 }),
      ["T5", "T4", "T3", "T2", "T1"],
    ],
    [
      "created_before in Unix seconds, before all",
      () => ({ created_before: unix(t.T1?.created_at) - 1 }),
      [],
    ],
  ])("filters by %s", async (_name, query, expected) => {
    expect(await subjects(query())).toEqual(expected);
  });
});

describe("list filters: combined, and refused", () => {
  withListFixtures();

  it.each<[string, () => Query, string[]]>([
    ["status + priority", () => ({ status: "New", priority: "high" }), ["T1"]],
    ["status + contact", () => ({ status: "Solved", contact_id: conA }), []],
    ["contact + tag", () => ({ contact_id: conA, tag: "login" }), ["T1"]],
    [
      "priority + category + two tags",
      () => ({ priority: "high", category: "auth", tag: ["vip", "login"] }),
      ["T4", "T1"],
    ],
    [
      "priority + category + tags + time window",
      () => ({ priority: "high", category: "auth", tag: "vip", created_before: t.T4?.created_at }),
      ["T1"],
    ],
    [
      "both time bounds + category",
      () => ({ created_after: t.T1?.created_at, created_before: t.T5?.created_at, category: "billing" }),
      ["T3", "T2"],
    ],
    [
      "every filter at once",
      () => ({
        status: "New",
        priority: "low",
        category: "billing",
        contact_id: conB,
        tag: ["login", "refund"],
        created_after: "0",
        created_before: "2100-01-01T00:00:00Z",
      }),
      ["T3"],
    ],
  ])("combines %s", async (_name, query, expected) => {
    expect(await subjects(query())).toEqual(expected);
  });

  it.each<[Query, string, string]>([
    [{ status: "Open" }, "status", "parameter_invalid"],
    [{ status: "new" }, "status", "parameter_invalid"],
    [{ priority: "critical" }, "priority", "parameter_invalid"],
    [{ category: "" }, "category", "parameter_invalid"],
    [{ contact_id: "tkt_2bXkrB7nQ2wE5tYu" }, "contact_id", "parameter_invalid"],
    [{ created_after: "yesterday" }, "created_after", "parameter_invalid"],
    [{ created_before: "2026-01-01T00:00:00" }, "created_before", "parameter_invalid"],
    [{ limit: 0 }, "limit", "parameter_invalid"],
    [{ limit: 101 }, "limit", "parameter_invalid"],
    [{ starting_after: "con_0VbeYDRKD1TvDlY414ApAt" }, "starting_after", "parameter_invalid"],
    [{ tags: "vip" }, "tags", "parameter_unknown"],
    [{ search: "x" }, "search", "parameter_unknown"],
  ])("rejects %j", async (query, param, code) => {
    const response = await api.get("/open/v1/tickets", { key: listKey, query });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code, param });
  });

  it("names the allowed values of an enum filter", async () => {
    const response = await api.get("/open/v1/tickets", { key: listKey, query: { status: "Open" } });
    expect(response.body.error.message).toContain('"On customer"');
  });
});

const unix = (time: string | undefined) => Math.floor(Date.parse(time as string) / 1000);

describe("cursor paging", () => {
  let pagingKey: string;
  const created: Ticket[] = [];
  beforeAll(async () => {
    ({ key: pagingKey } = await newWorkspace());
    for (let i = 0; i < 27; i++) {
      created.push(
        await createTicket({ subject: `Page ${i}`, status: i % 3 === 0 ? "On hold" : "New" }, pagingKey),
      );
    }
  });
  const newestFirst = (tickets: Ticket[]) => tickets.map((ticket) => ticket.id).reverse();

  const walk = (query: Query) => walkPages("/open/v1/tickets", pagingKey, query);

  it("walks 27 tickets in pages of 10 with no gaps or repeats, newest first", async () => {
    expect(await walk({ limit: 10 })).toEqual(newestFirst(created));
  });

  it("the default page size is 10", async () => {
    const { body } = await api.get("/open/v1/tickets", { key: pagingKey });
    expect(body.data).toHaveLength(10);
    expect(body.has_more).toBe(true);
  });

  it("pages through a filter (status=New) in pages of 4", async () => {
    expect(await walk({ limit: 4, status: "New" })).toEqual(
      newestFirst(created.filter((ticket) => ticket.status === "New")),
    );
  });

  it("walks a filter (status=On hold) one by one to the end", async () => {
    expect(await walk({ limit: 1, status: "On hold" })).toEqual(
      newestFirst(created.filter((ticket) => ticket.status === "On hold")),
    );
  });

  it("a cursor still works after its ticket is deleted", async () => {
    // Its own workspace, so no other test sees the deletion.
    const { key: deleteKey } = await newWorkspace();
    const tickets: Ticket[] = [];
    for (let i = 0; i < 8; i++) tickets.push(await createTicket({ subject: `Gone ${i}` }, deleteKey));
    const expected = newestFirst(tickets);
    const cursor = expected[3] as string;
    expect((await api.delete(`/open/v1/tickets/${cursor}`, { key: deleteKey })).status).toBe(200);
    const next = await api.get("/open/v1/tickets", {
      key: deleteKey,
      query: { limit: 3, starting_after: cursor },
    });
    expect(next.status).toBe(200);
    expect(next.body.data.map((ticket: Ticket) => ticket.id)).toEqual(expected.slice(4, 7));
  });
});

describe("scopes and authentication", () => {
  let ticket: Ticket;
  let readOnly: string;
  let writeOnly: string;
  let contactsOnly: string;
  beforeAll(async () => {
    ticket = await createTicket({ subject: "Scoped" });
    readOnly = await newKey(workspaceId, ["tickets:read"]);
    writeOnly = await newKey(workspaceId, ["tickets:write"]);
    contactsOnly = await newKey(workspaceId, ["contacts:read", "contacts:write"]);
  });

  const calls = () => ({
    read: [
      (k?: string) => api.get("/open/v1/tickets", { key: k }),
      (k?: string) => api.get(`/open/v1/tickets/${ticket.id}`, { key: k }),
    ],
    write: [
      (k?: string) => api.post("/open/v1/tickets", { key: k, body: { subject: "Scope check" } }),
      (k?: string) => api.patch(`/open/v1/tickets/${ticket.id}`, { key: k, body: { notes: "scope" } }),
      (k?: string) => api.delete(`/open/v1/tickets/${newId("tkt")}`, { key: k }),
    ],
  });

  async function expectForbidden(call: (k?: string) => Promise<any>, withKey: string, scope: string) {
    expectInsufficientScope(await call(withKey), scope);
  }

  it("tickets:read reads and cannot write", async () => {
    for (const call of calls().read) expect((await call(readOnly)).status).toBe(200);
    for (const call of calls().write) await expectForbidden(call, readOnly, "tickets:write");
  });

  it("tickets:write writes and cannot read", async () => {
    const [create, patch, remove] = calls().write;
    expect((await create?.(writeOnly))?.status).toBe(201);
    expect((await patch?.(writeOnly))?.status).toBe(200);
    expect((await remove?.(writeOnly))?.status).toBe(404); // allowed in, then the id is unknown
    for (const call of calls().read) await expectForbidden(call, writeOnly, "tickets:read");
  });

  it("contact scopes do not reach tickets", async () => {
    for (const call of calls().read) await expectForbidden(call, contactsOnly, "tickets:read");
    for (const call of calls().write) await expectForbidden(call, contactsOnly, "tickets:write");
  });

  it("no key is 401 missing_api_key; a wrong key is 401 invalid_api_key", async () => {
    for (const call of [...calls().read, ...calls().write]) {
      const missing = await call();
      expect(missing.status).toBe(401);
      expect(missing.body.error.code).toBe("missing_api_key");
      expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const wrong = await call("dk_not_a_real_key");
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe("invalid_api_key");
    }
  });
});

describe("workspace isolation", () => {
  let theirs: Ticket;
  let theirContactId: string;
  beforeAll(async () => {
    theirContactId = await newContact(theirKey, "Theirs");
    theirs = await createTicket(
      {
        subject: "Their ticket",
        status: "On hold",
        priority: "urgent",
        category: "shared-category",
        contact_id: theirContactId,
        conversation_id: await openConversationIn(theirWorkspaceId),
        tags: ["shared-tag"],
      },
      theirKey,
    );
  });

  it("another workspace's ticket is 404 for get, patch and delete, exactly like a missing one", async () => {
    const missing = newId("tkt");
    for (const method of ["get", "patch", "delete"] as const) {
      const body = method === "patch" ? { subject: "Hijacked" } : undefined;
      expectSameAsMissing(
        { response: await api[method](`/open/v1/tickets/${theirs.id}`, { key, body }), id: theirs.id },
        { response: await api[method](`/open/v1/tickets/${missing}`, { key, body }), id: missing },
      );
    }
    expect((await api.get(`/open/v1/tickets/${theirs.id}`, { key: theirKey })).body).toEqual(theirs);
  });

  it("lists and every filter see only the key's workspace", async () => {
    const list = async (query: Query) => {
      const response = await api.get("/open/v1/tickets", { key, query: { limit: 100, ...query } });
      expect(response.status).toBe(200);
      return response.body.data.map((ticket: Ticket) => ticket.id);
    };
    // Values only their ticket carries: my list must come back empty.
    for (const query of <Query[]>[
      { category: "shared-category" },
      { contact_id: theirContactId },
      { tag: "shared-tag" },
      { status: "On hold", priority: "urgent", tag: "shared-tag", contact_id: theirContactId },
    ]) {
      expect(await list(query), JSON.stringify(query)).toEqual([]);
    }
    // Values my own tickets share: theirs is never among them.
    for (const query of <Query[]>[
      {},
      { status: "On hold" },
      { priority: "urgent" },
      { created_after: "0" },
    ]) {
      expect(await list(query), JSON.stringify(query)).not.toContain(theirs.id);
    }
  });

  it("their ticket's id as a cursor only positions the page in my own list", async () => {
    const response = await api.get("/open/v1/tickets", {
      key,
      query: { starting_after: theirs.id, limit: 100 },
    });
    expect(response.status).toBe(200);
    for (const ticket of response.body.data) expect(ticket.id < theirs.id).toBe(true);
  });
});

// One ticket for the request validation blocks, checked unchanged at their end.
let validationTarget: Ticket;
const withValidationTarget = sharedBeforeAll(async () => {
  validationTarget = await createTicket({ subject: "Validation target" });
});

describe("request validation: enums, times and the subject", () => {
  withValidationTarget();

  const ENUMS = {
    status: ["Open", "new", "SOLVED", "closed"],
    priority: ["critical", "High", ""],
    sentiment: ["angry", "Positive", ""],
  } as const;

  it.each(Object.entries(ENUMS))(
    "%s takes only its allowed values, and the message lists them",
    async (field, bad) => {
      for (const value of bad) {
        for (const response of [
          await api.post("/open/v1/tickets", { key, body: { subject: "Enum", [field]: value } }),
          await patchTicket(validationTarget.id, { [field]: value }),
        ]) {
          expect(response.status, `${field}=${value}`).toBe(400);
          expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: field });
          expect(response.body.error.message).toMatch(/must be one of: /);
        }
      }
    },
  );

  it.each([
    ["a word", "tomorrow"],
    ["a date without time", "2026-03-06"],
    ["a time without zone", "2026-03-06T17:00:00"],
    ["an impossible date", "2026-02-30T10:00:00Z"],
    ["Unix seconds as a number", 1772816400],
  ])("due_at rejects %s", async (_name, value) => {
    for (const response of [
      await api.post("/open/v1/tickets", { key, body: { subject: "Due", due_at: value } }),
      await patchTicket(validationTarget.id, { due_at: value }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "due_at" });
    }
  });

  it("subject is required on create and cannot be empty or cleared", async () => {
    const missing = await api.post("/open/v1/tickets", { key, body: { priority: "low" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "parameter_missing", param: "subject" });
    for (const response of [
      await api.post("/open/v1/tickets", { key, body: { subject: "" } }),
      await patchTicket(validationTarget.id, { subject: "" }),
      await patchTicket(validationTarget.id, { subject: null }),
      await patchTicket(validationTarget.id, { status: null }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("parameter_invalid");
    }
  });
});

describe("request validation: fields set by the server, and refused bodies", () => {
  withValidationTarget();

  it.each(["solved_at", "closed_at", "id", "object", "created_at", "foo"])(
    "%s is not a field a client sets: 400 parameter_unknown",
    async (field) => {
      const value = field.endsWith("_at") ? "2026-01-01T00:00:00Z" : "x";
      for (const response of [
        await api.post("/open/v1/tickets", { key, body: { subject: "Unknown", [field]: value } }),
        await patchTicket(validationTarget.id, { [field]: value }),
      ]) {
        expect(response.status).toBe(400);
        expect(response.body.error).toMatchObject({ code: "parameter_unknown", param: field });
      }
    },
  );

  it.each<[string, Record<string, unknown>, string]>([
    ["subject as a number", { subject: 42 }, "subject"],
    ["tags as a string", { tags: "vip" }, "tags"],
    ["a tag as a number", { tags: ["ok", 7] }, "tags[1]"],
    ["notes as an object", { notes: { text: "x" } }, "notes"],
    ["assignee_id as a boolean", { assignee_id: true }, "assignee_id"],
    ["contact_id of the wrong kind", { contact_id: "tkt_2bXkrB7nQ2wE5tYu" }, "contact_id"],
    ["conversation_id of the wrong kind", { conversation_id: "con_2bXkq9TmR4vN8sLw" }, "conversation_id"],
    ["language that is no BCP 47 tag", { language: "english please" }, "language"],
    ["a subject of whitespace", { subject: " \n " }, "subject"],
  ])("rejects %s", async (_name, fields, param) => {
    for (const response of [
      await api.post("/open/v1/tickets", { key, body: { subject: "Types", ...fields } }),
      await patchTicket(validationTarget.id, fields),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param });
    }
  });

  it("nothing invalid was stored along the way", async () => {
    expect((await api.get(`/open/v1/tickets/${validationTarget.id}`, { key })).body).toEqual(
      validationTarget,
    );
  });
});

describe("idempotent create", () => {
  let idemKey: string;
  beforeAll(async () => {
    ({ key: idemKey } = await newWorkspace());
  });
  const post = (body: unknown, idempotencyKey: string) =>
    api.post("/open/v1/tickets", { key: idemKey, body, headers: { "Idempotency-Key": idempotencyKey } });

  it("a replay answers the first response with Idempotent-Replayed and creates no second ticket", async () => {
    const body = { subject: "Exactly once", status: "Solved", tags: ["retry"] };
    const first = await post(body, "ticket-create-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const replay = await post(body, "ticket-create-1");
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);

    const list = await api.get("/open/v1/tickets", { key: idemKey, query: { tag: "retry" } });
    expect(list.body.data.map((ticket: Ticket) => ticket.id)).toEqual([first.body.id]);
  });

  it("the same key with another body is 422 idempotency_key_reused", async () => {
    expect((await post({ subject: "One" }, "ticket-create-2")).status).toBe(201);
    const reused = await post({ subject: "Two" }, "ticket-create-2");
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe("idempotency_key_reused");
  });

  it("a create refused for a foreign contact is replayed as the same 400", async () => {
    const body = { subject: "Bad link", contact_id: newId("con") };
    const first = await post(body, "ticket-create-3");
    expect(first.status).toBe(400);
    const replay = await post(body, "ticket-create-3");
    expect(replay.status).toBe(400);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.error).toMatchObject({ code: "parameter_invalid", param: "contact_id" });
  });
});
