import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/platform/ids.js";
import { admin, api, newWorkspace } from "./helpers/api.js";
import { newContact, openConversation } from "./helpers/conversations.js";
import { walkPages } from "./helpers/paging.js";

type Query = Record<string, string | number | boolean | string[]>;

let key: string;
let workspaceId: string;
const contacts: Record<"A" | "B", string> = { A: "", B: "" };

/** What each fixture conversation goes through; its state after that is what the filters see. */
interface Fixture {
  contact: "A" | "B";
  channel: string;
  /** An agent reply: the conversation is read. */
  reply?: boolean;
  /** Then the customer writes again: unread once more. */
  customerAgain?: boolean;
  close?: boolean;
}

const FIXTURES: Fixture[] = [
  { contact: "A", channel: "email" },
  { contact: "A", channel: "chat", reply: true },
  { contact: "B", channel: "email", close: true },
  { contact: "B", channel: "whatsapp", reply: true, close: true },
  { contact: "A", channel: "email", reply: true, customerAgain: true },
  { contact: "B", channel: "chat" },
  { contact: "A", channel: "email", reply: true, close: true },
];

/** The fixtures as the list shows them, newest (created last) first. */
const created: { id: string; status: string; channel: string; contact_id: string; unread: boolean }[] = [];

beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
  contacts.A = await newContact(key, "A");
  contacts.B = await newContact(key, "B");
  for (const fixture of FIXTURES) {
    const { id } = await openConversation(workspaceId, key, {
      contactId: contacts[fixture.contact],
      channel: fixture.channel,
    });
    if (fixture.reply) {
      const reply = await api.post(`/open/v1/conversations/${id}/messages`, {
        key,
        body: { body: "On it.", internal_note: false },
      });
      expect(reply.status).toBe(201);
    }
    if (fixture.customerAgain) {
      expect(
        (await admin("POST", `/admin/v1/conversations/${id}/messages`, { body: "Any news?" })).status,
      ).toBe(201);
    }
    if (fixture.close) expect((await admin("POST", `/admin/v1/conversations/${id}/close`)).status).toBe(200);
    created.unshift({
      id,
      status: fixture.close ? "closed" : "open",
      channel: fixture.channel,
      contact_id: contacts[fixture.contact],
      unread: !fixture.reply || Boolean(fixture.customerAgain),
    });
  }
});

async function listIds(query: Query, withKey = key): Promise<string[]> {
  const response = await api.get("/open/v1/conversations", { key: withKey, query: { limit: 100, ...query } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.map((conversation: { id: string }) => conversation.id);
}

describe("list conversations: every filter combination", () => {
  it("lists the workspace's conversations newest first, each as getConversation returns it", async () => {
    const response = await api.get("/open/v1/conversations", { key, query: { limit: 100 } });
    expect(response.body).toMatchObject({ object: "list", has_more: false });
    expect(response.body.data.map((c: { id: string }) => c.id)).toEqual(created.map((c) => c.id));
    for (const conversation of response.body.data) {
      expect(conversation).toMatchObject(created.find((c) => c.id === conversation.id) as object);
      const one = await api.get(`/open/v1/conversations/${conversation.id}`, { key });
      expect(one.body).toEqual(conversation);
    }
  });

  // Every combination of the four filters, each absent or set: the list is exactly the fixtures
  // that match all the filters given, in the same order.
  const VALUES = {
    status: [undefined, "open", "closed"],
    channel: [undefined, "email", "chat", "sms"],
    contact_id: [undefined, "A", "B"],
    unread: [undefined, true, false],
  } as const;
  const combinations: Record<string, string | boolean | undefined>[] = [];
  for (const status of VALUES.status)
    for (const channel of VALUES.channel)
      for (const contact_id of VALUES.contact_id)
        for (const unread of VALUES.unread) combinations.push({ status, channel, contact_id, unread });

  it.each(
    combinations.map((combination) => {
      const given = Object.entries(combination).filter(([, value]) => value !== undefined);
      return [given.map(([name, value]) => `${name}=${value}`).join("&") || "(none)", combination] as const;
    }),
  )("filters %s", async (_name, combination) => {
    const query: Query = {};
    for (const [name, value] of Object.entries(combination)) {
      if (value === undefined) continue;
      query[name] = name === "contact_id" ? contacts[value as "A" | "B"] : value;
    }
    const expected = created
      .filter((c) => Object.entries(query).every(([name, value]) => c[name as keyof typeof c] === value))
      .map((c) => c.id);
    expect(await listIds(query)).toEqual(expected);
  });
});

describe("list conversations: filter values written otherwise, and refused", () => {
  it("unread takes true and false as strings", async () => {
    expect(await listIds({ unread: "true" })).toEqual(created.filter((c) => c.unread).map((c) => c.id));
    expect(await listIds({ unread: "false" })).toEqual(created.filter((c) => !c.unread).map((c) => c.id));
  });

  it("an unknown contact or channel matches nothing", async () => {
    expect(await listIds({ contact_id: newId("con") })).toEqual([]);
    expect(await listIds({ channel: "EMAIL" })).toEqual([]);
  });

  it.each<[string, Query, string, string]>([
    ["a status that is no conversation status", { status: "pending" }, "parameter_invalid", "status"],
    ["a ticket status", { status: "New" }, "parameter_invalid", "status"],
    ["unread that is no boolean", { unread: "yes" }, "parameter_invalid", "unread"],
    ["unread as 1", { unread: "1" }, "parameter_invalid", "unread"],
    [
      "a contact_id of the wrong kind",
      { contact_id: "tkt_2bXkrB7nQ2wE5tYu" },
      "parameter_invalid",
      "contact_id",
    ],
    ["an empty channel", { channel: "" }, "parameter_invalid", "channel"],
    ["limit 0", { limit: 0 }, "parameter_invalid", "limit"],
    ["limit 101", { limit: 101 }, "parameter_invalid", "limit"],
    [
      "a cursor of another kind",
      { starting_after: "con_2bXkq9TmR4vN8sLw" },
      "parameter_invalid",
      "starting_after",
    ],
    ["a contacts filter", { email: "a@example.com" }, "parameter_unknown", "email"],
    ["created_after (not a filter here)", { created_after: "0" }, "parameter_unknown", "created_after"],
  ])("rejects %s", async (_name, query, code, param) => {
    const response = await api.get("/open/v1/conversations", { key, query });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: "invalid_request_error", code, param });
  });
});

describe("paging", () => {
  let pagingKey: string;
  const ids: string[] = [];
  beforeAll(async () => {
    let pagingWorkspace: string;
    ({ key: pagingKey, workspaceId: pagingWorkspace } = await newWorkspace());
    const contactId = await newContact(pagingKey);
    for (let i = 0; i < 23; i++) {
      const channel = i % 3 === 0 ? "sms" : "email";
      ids.unshift((await openConversation(pagingWorkspace, pagingKey, { contactId, channel })).id);
    }
  });

  it("walks every page with starting_after, newest first, each seen once", async () => {
    const seen = await walkPages("/open/v1/conversations", pagingKey, { limit: 5 });
    expect(seen).toEqual(ids);
  });

  it("the default page is 10 with has_more", async () => {
    const page = await api.get("/open/v1/conversations", { key: pagingKey });
    expect(page.body.data).toHaveLength(10);
    expect(page.body.has_more).toBe(true);
  });

  it("pages a filtered list too", async () => {
    const sms = ids.filter((_, index) => (22 - index) % 3 === 0);
    expect(sms).toHaveLength(8);
    expect(await walkPages("/open/v1/conversations", pagingKey, { limit: 3, channel: "sms" })).toEqual(sms);
  });

  it("a cursor is a position: the page after it, even for an id no conversation has", async () => {
    const middle = ids[11] as string;
    expect(await listIds({ starting_after: middle }, pagingKey)).toEqual(ids.slice(12));
    expect(await listIds({ starting_after: newId("conv") }, pagingKey)).toEqual(ids);
  });
});
