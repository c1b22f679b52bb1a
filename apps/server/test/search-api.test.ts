import { beforeAll, describe, expect, it } from "vitest";
import { api, newKey, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";

/**
 * The search API (`searchContacts`, `searchTickets`; docs/api.md, "Searching"): `filter_groups`
 * as an OR of AND groups, each operator checked against a model computed here from the same
 * records, the sort orders paged through with their cursor, and every refusal naming its
 * `param`. Every answer is checked against the spec by `api`.
 */

runDatabase();

type Filter = { field: string; operator: string; value?: unknown; values?: unknown[] };
type Contact = {
  id: string;
  name: string;
  email: string | null;
  tags: string[];
  lifecycle_stage: string | null;
  custom_fields: Record<string, unknown>;
};

let key: string;
const contacts: Contact[] = [];

const SEED: Record<string, unknown>[] = [
  {
    name: "Ada Lovelace",
    email: "Ada@Example.com",
    lifecycle_stage: "lead",
    tags: ["vip"],
    custom_fields: { plan: "pro", seats: 12 },
  },
  {
    name: "Alan Turing",
    email: "alan@bletchley.uk",
    lifecycle_stage: "customer",
    custom_fields: { plan: "team", seats: 40 },
  },
  {
    name: "Grace Hopper",
    email: "grace@navy.mil",
    lifecycle_stage: "lead",
    tags: ["beta"],
    custom_fields: { plan: "free", seats: 1 },
  },
  {
    name: "adele Goldberg",
    lifecycle_stage: "lead",
    custom_fields: { plan: "team", seats: 10 },
    phone: "+1 (555) 010-2030",
  },
  { name: "Barbara Liskov", email: "barbara@mit.edu", tags: ["vip", "beta"], do_not_contact: true },
  { name: "Edsger Dijkstra", lifecycle_stage: "customer", custom_fields: { seats: 9.5 } },
];

beforeAll(async () => {
  ({ key } = await newWorkspace());
  for (const body of SEED) {
    const response = await api.post("/open/v1/contacts", { key, body });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    contacts.push(response.body);
  }
});

async function search(body: Record<string, unknown>, as = key) {
  return api.post("/open/v1/contacts/search", { key: as, body });
}

/** The names a one-group search finds, newest first. */
async function found(
  filter_groups: { filters: Filter[] }[],
  extra: Record<string, unknown> = {},
): Promise<string[]> {
  const response = await search({ filter_groups, limit: 100, ...extra });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.has_more).toBe(false);
  expect(response.body.next_cursor).toBeNull();
  return response.body.data.map((contact: Contact) => contact.name);
}

/** The names of the seeded contacts that `keep` holds for, newest first, as the search answers. */
const model = (keep: (contact: Contact) => boolean): string[] =>
  contacts
    .filter(keep)
    .map((contact) => contact.name)
    .reverse();

const seats = (contact: Contact) => contact.custom_fields.seats as number | undefined;

describe("searchContacts: filter groups and numbers", () => {
  it("reads filter_groups as an OR of AND groups", async () => {
    const names = await found([
      {
        filters: [
          { field: "lifecycle_stage", operator: "eq", value: "lead" },
          { field: "custom_fields.plan", operator: "in", values: ["pro", "team"] },
        ],
      },
      { filters: [{ field: "tags", operator: "eq", value: "vip" }] },
    ]);
    expect(names).toEqual(
      model(
        (c) =>
          (c.lifecycle_stage === "lead" && ["pro", "team"].includes(String(c.custom_fields.plan))) ||
          c.tags.includes("vip"),
      ),
    );
    expect(names).toEqual(["Barbara Liskov", "adele Goldberg", "Ada Lovelace"]);
    // No group: every contact.
    expect(await found([])).toEqual(model(() => true));
  });

  it("compares numbers in custom fields with every ordering operator", async () => {
    const cases: [string, unknown, (n: number) => boolean][] = [
      ["gt", 10, (n) => n > 10],
      ["gte", 10, (n) => n >= 10],
      ["lt", 10, (n) => n < 10],
      ["lte", 9.5, (n) => n <= 9.5],
      ["eq", 12, (n) => n === 12],
    ];
    for (const [operator, value, holds] of cases) {
      const names = await found([{ filters: [{ field: "custom_fields.seats", operator, value }] }]);
      expect(names, `seats ${operator} ${value}`).toEqual(
        model((c) => seats(c) !== undefined && holds(seats(c) as number)),
      );
    }
    const without = await found([
      { filters: [{ field: "custom_fields.seats", operator: "exists", value: false }] },
    ]);
    expect(without).toEqual(model((c) => seats(c) === undefined));
    const neq = await found([{ filters: [{ field: "custom_fields.seats", operator: "neq", value: 12 }] }]);
    expect(neq).toEqual(model((c) => seats(c) !== 12));
  });
});

describe("searchContacts: filters by each kind of value, and with query", () => {
  it("matches text, lists, flags and phones by their own rules", async () => {
    // prefix ignores case; email is compared lower-cased.
    expect(await found([{ filters: [{ field: "name", operator: "prefix", value: "AD" }] }])).toEqual([
      "adele Goldberg",
      "Ada Lovelace",
    ]);
    expect(
      await found([{ filters: [{ field: "email", operator: "eq", value: "ada@EXAMPLE.com" }] }]),
    ).toEqual(["Ada Lovelace"]);
    // A prefix is literal text, not a pattern.
    expect(await found([{ filters: [{ field: "name", operator: "prefix", value: "A.a" }] }])).toEqual([]);
    const tags = (operator: string, extra: Partial<Filter>) =>
      found([{ filters: [{ field: "tags", operator, ...extra }] }]);
    expect(await tags("neq", { value: "vip" })).toEqual(model((c) => !c.tags.includes("vip")));
    expect(await tags("in", { values: ["beta", "nope"] })).toEqual(model((c) => c.tags.includes("beta")));
    expect(await tags("nin", { values: ["vip", "beta"] })).toEqual(model((c) => c.tags.length === 0));
    expect(await tags("exists", { value: true })).toEqual(model((c) => c.tags.length > 0));
    expect(await tags("exists", { value: false })).toEqual(model((c) => c.tags.length === 0));
    expect(await found([{ filters: [{ field: "do_not_contact", operator: "eq", value: true }] }])).toEqual([
      "Barbara Liskov",
    ]);
    // Any spelling of the number finds it (no default country: it needs its + code).
    for (const value of ["+15550102030", "+1 555 010 2030"]) {
      expect(await found([{ filters: [{ field: "phone", operator: "eq", value }] }])).toEqual([
        "adele Goldberg",
      ]);
    }
    expect(await found([{ filters: [{ field: "email", operator: "exists", value: false }] }])).toEqual(
      model((c) => c.email === null),
    );
  });

  it("ANDs `query` (word prefixes) with the groups, and times compare as instants", async () => {
    const names = await found([{ filters: [{ field: "lifecycle_stage", operator: "eq", value: "lead" }] }], {
      query: "ad",
    });
    expect(names).toEqual(["adele Goldberg", "Ada Lovelace"]);
    const first = contacts[0] as Contact & { created_at: string };
    const after = await found([
      { filters: [{ field: "created_at", operator: "gte", value: first.created_at }] },
    ]);
    expect(after).toEqual(model(() => true));
    const unix = Math.floor(Date.parse(first.created_at) / 1000) + 3600;
    expect(await found([{ filters: [{ field: "created_at", operator: "gt", value: unix }] }])).toEqual([]);
  });
});

describe("searchContacts: defined custom fields", () => {
  it('reads a defined field\'s values by its type: seats gte 10 filters, "abc" is refused', async () => {
    const { key: own } = await newWorkspace();
    const defined = await api.post("/open/v1/custom-field-definitions", {
      key: own,
      body: { key: "seats", label: "Seats", type: "number" },
    });
    expect(defined.status, JSON.stringify(defined.body)).toBe(201);
    const refusedWrite = await api.post("/open/v1/contacts", {
      key: own,
      body: { name: "X", custom_fields: { seats: "abc" } },
    });
    expect(refusedWrite.body.error).toMatchObject({
      code: "parameter_invalid",
      param: "custom_fields.seats",
    });
    for (const [name, seats] of [
      ["Small", 3],
      ["Team", 10],
      ["Big", 250],
    ] as const) {
      const made = await api.post("/open/v1/contacts", {
        key: own,
        body: { name, custom_fields: { seats } },
      });
      expect(made.status).toBe(201);
    }
    const seats = (operator: string, value: unknown) =>
      search({ filter_groups: [{ filters: [{ field: "custom_fields.seats", operator, value }] }] }, own);
    const found = await seats("gte", 10);
    expect(found.status).toBe(200);
    expect(found.body.data.map((c: Contact) => c.name)).toEqual(["Big", "Team"]);
    // A number written as text reads as one, as the list's `custom_fields.seats=10` does.
    expect((await seats("eq", "10")).body.data.map((c: Contact) => c.name)).toEqual(["Team"]);
    const at = "filter_groups[0].filters[0]";
    expect((await seats("gte", "abc")).body.error).toMatchObject({
      code: "parameter_invalid",
      param: `${at}.value`,
    });
    expect((await seats("prefix", "1")).body.error).toMatchObject({
      code: "parameter_invalid",
      param: `${at}.operator`,
    });
  });
});

describe("searchContacts: order and paging", () => {
  /** Every page of a search, `limit` 2 at a time, through its cursor. */
  async function pageThrough(sort?: Record<string, unknown>): Promise<string[]> {
    const names: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const response = await search({ sort, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      names.push(...response.body.data.map((c: Contact) => c.name));
      expect(response.body.next_cursor === null).toBe(!response.body.has_more);
      if (!response.body.has_more) return names;
      cursor = response.body.next_cursor;
    }
    throw new Error("the search did not end");
  }

  it("pages through each sort order once, without loss or repeat", async () => {
    const newest = model(() => true);
    expect(await pageThrough()).toEqual(newest);
    expect(await pageThrough({ field: "created_at", direction: "asc" })).toEqual([...newest].reverse());
    // Touch the oldest: it becomes the most recently updated.
    const oldest = contacts[0] as Contact;
    const touched = await api.patch(`/open/v1/contacts/${oldest.id}`, {
      key,
      body: { company: "Analytical" },
    });
    expect(touched.status).toBe(200);
    const byUpdate = await pageThrough({ field: "updated_at", direction: "desc" });
    expect(byUpdate[0]).toBe(oldest.name);
    expect([...byUpdate].sort()).toEqual([...newest].sort());
    const ascending = await pageThrough({ field: "updated_at", direction: "asc" });
    expect(ascending).toEqual([...byUpdate].reverse());
  });

  it("refuses a cursor of another sort, or none of ours", async () => {
    const first = await search({ limit: 1 });
    const cursor = first.body.next_cursor as string;
    const other = await search({ cursor, sort: { field: "updated_at" } });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ code: "parameter_invalid", param: "cursor" });
    const forged = await search({ cursor: Buffer.from("s1.created_at.desc..x").toString("base64url") });
    expect(forged.body.error).toMatchObject({ code: "parameter_invalid", param: "cursor" });
  });
});

describe("searchContacts: refusals name the param", () => {
  const at = "filter_groups[0].filters[0]";
  const one = (filter: Record<string, unknown>) => ({ filter_groups: [{ filters: [filter] }] });
  const cases: [string, Record<string, unknown>, string][] = [
    ["an unknown field", one({ field: "nickname", operator: "eq", value: "x" }), `${at}.field`],
    ["a map key with a dot", one({ field: "custom_fields.a.b", operator: "eq", value: "x" }), `${at}.field`],
    [
      "an operator the field does not take",
      one({ field: "do_not_contact", operator: "prefix", value: "t" }),
      `${at}.operator`,
    ],
    [
      "a value of the wrong type",
      one({ field: "do_not_contact", operator: "eq", value: "yes" }),
      `${at}.value`,
    ],
    ["text for a time", one({ field: "created_at", operator: "gt", value: "yesterday" }), `${at}.value`],
    ["a phone that does not read", one({ field: "phone", operator: "eq", value: "call me" }), `${at}.value`],
    ["`value` with `in`", one({ field: "tags", operator: "in", value: "vip" }), `${at}.value`],
    ["`in` without `values`", one({ field: "tags", operator: "in" }), `${at}.values`],
    ["`values` with `eq`", one({ field: "tags", operator: "eq", values: ["vip"] }), `${at}.values`],
    ["`eq` without `value`", one({ field: "name", operator: "eq" }), `${at}.value`],
    [
      "a prefix that is not text",
      one({ field: "custom_fields.plan", operator: "prefix", value: 1 }),
      `${at}.value`,
    ],
    ["an unknown operator", one({ field: "name", operator: "like", value: "a" }), `${at}.operator`],
    [
      "six groups",
      { filter_groups: Array(6).fill({ filters: [{ field: "name", operator: "eq", value: "a" }] }) },
      "filter_groups",
    ],
    [
      "eleven filters",
      { filter_groups: [{ filters: Array(11).fill({ field: "name", operator: "eq", value: "a" }) }] },
      "filter_groups[0].filters",
    ],
    [
      "101 values",
      one({ field: "tags", operator: "in", values: Array.from({ length: 101 }, (_, i) => `t${i}`) }),
      `${at}.values`,
    ],
    ["nine words", { query: "a b c d e f g h i" }, "query"],
    ["a field of no search", { where: {} }, "where"],
  ];
  it.each(cases)("%s", async (_, body, param) => {
    const response = await search(body);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.param).toBe(param);
    expect(response.body.error.message.length).toBeGreaterThan(10);
  });

  it("needs contacts:read, and sees only its workspace", async () => {
    const { workspaceId } = await newWorkspace();
    const ticketsOnly = await newKey(workspaceId, ["tickets:read"]);
    expect((await search({}, ticketsOnly)).status).toBe(403);
    const reader = await newKey(workspaceId, ["contacts:read"]);
    const response = await search({}, reader);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([]);
  });
});

describe("searchTickets", () => {
  let ticketKey: string;
  const tickets: {
    id: string;
    subject: string;
    status: string;
    priority: string | null;
    due_at: string | null;
  }[] = [];

  beforeAll(async () => {
    ({ key: ticketKey } = await newWorkspace());
    const bodies = [
      { subject: "Printer on fire", priority: "urgent", tags: ["escalated"] },
      { subject: "Refund please", priority: "normal", status: "Solved" },
      { subject: "Login loop", priority: "urgent", status: "On hold", due_at: "2030-01-01T00:00:00Z" },
      { subject: "Feature idea", status: "Closed", tags: ["escalated"] },
    ];
    for (const body of bodies) {
      const response = await api.post("/open/v1/tickets", { key: ticketKey, body });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      tickets.push(response.body);
    }
  });

  const subjects = async (body: Record<string, unknown>) => {
    const response = await api.post("/open/v1/tickets/search", {
      key: ticketKey,
      body: { limit: 100, ...body },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data.map((t: { subject: string }) => t.subject);
  };

  it("filters on status, priority, tags and times", async () => {
    const open = await subjects({
      filter_groups: [
        {
          filters: [
            { field: "priority", operator: "eq", value: "urgent" },
            { field: "status", operator: "nin", values: ["Solved", "Closed", "Cancelled"] },
          ],
        },
        { filters: [{ field: "tags", operator: "eq", value: "escalated" }] },
      ],
    });
    expect(open).toEqual(["Feature idea", "Login loop", "Printer on fire"]);
    const due = await subjects({
      filter_groups: [{ filters: [{ field: "due_at", operator: "exists", value: true }] }],
    });
    expect(due).toEqual(tickets.filter((t) => t.due_at).map((t) => t.subject));
    const oldestFirst = await subjects({ sort: { field: "created_at", direction: "asc" } });
    expect(oldestFirst).toEqual(tickets.map((t) => t.subject));
  });

  it("refuses a status that is none, naming the value", async () => {
    const response = await api.post("/open/v1/tickets/search", {
      key: ticketKey,
      body: { filter_groups: [{ filters: [{ field: "status", operator: "in", values: ["New", "Done"] }] }] },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: "parameter_invalid",
      param: "filter_groups[0].filters[0].values[1]",
    });
    expect(response.body.error.message).toContain('"On hold"');
  });
});
