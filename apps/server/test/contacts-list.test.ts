import { beforeAll, describe, expect, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { walkPages } from "./helpers/paging.js";

let key: string;
const ids: Record<string, string> = {};
let middleTime: string;

const fixtures = [
  {
    name: "Alice Smith",
    email: "alice@acme.test",
    phone: "+1 555 010 0101",
    tags: ["vip", "beta"],
    segments: ["smb"],
    lifecycle_stage: "lead",
  },
  {
    name: "Bob Stone",
    email: "bob@globex.test",
    phone: "+1 555 010 0102",
    tags: ["vip"],
    segments: ["enterprise", "emea"],
    lifecycle_stage: "customer",
  },
  {
    name: "Carol Acme",
    email: "carol@initech.test",
    phone: "+44 20 7946 0103",
    tags: ["beta"],
    segments: ["smb"],
    lifecycle_stage: "customer",
  },
  {
    name: "Dave",
    email: "DAVE@Acme.test",
    phone: "+1 555 010 0104",
    tags: [],
    segments: ["enterprise"],
    lifecycle_stage: "lead",
  },
  {
    name: "Eve",
    email: null,
    phone: "+1 555 010 0105",
    tags: ["vip", "beta", "churn-risk"],
    segments: [],
    lifecycle_stage: "churned",
  },
];

beforeAll(async () => {
  ({ key } = await newWorkspace());
  for (const [index, fixture] of fixtures.entries()) {
    const { body } = await api.post("/open/v1/contacts", { key, body: fixture });
    ids[fixture.name.split(" ")[0] as string] = body.id;
    if (index === 2) {
      await new Promise((done) => setTimeout(done, 1100));
      middleTime = new Date().toISOString();
      await new Promise((done) => setTimeout(done, 1100));
    }
  }
});

async function names(query: Record<string, string | number | boolean | string[]>): Promise<string[]> {
  const response = await api.get("/open/v1/contacts", { key, query: { limit: 100, ...query } });
  expect(response.status).toBe(200);
  return response.body.data.map((contact: { name: string }) => contact.name.split(" ")[0]);
}

describe("list filters", () => {
  it("lists newest first with the list envelope", async () => {
    const response = await api.get("/open/v1/contacts", { key });
    expect(response.body).toMatchObject({ object: "list", has_more: false });
    expect(await names({})).toEqual(["Eve", "Dave", "Carol", "Bob", "Alice"]);
  });

  it.each([
    ["email (case-insensitive)", { email: "dave@acme.TEST" }, ["Dave"]],
    ["phone", { phone: "+1 555 010 0102" }, ["Bob"]],
    ["search in name", { search: "stone" }, ["Bob"]],
    ["search in email", { search: "ACME" }, ["Dave", "Carol", "Alice"]],
    ["search in phone", { search: "20 79" }, ["Carol"]],
    ["search with regex characters is literal", { search: "+1 555" }, ["Eve", "Dave", "Bob", "Alice"]],
    ["search .* matches nothing", { search: ".*" }, []],
    ["one tag", { tag: "beta" }, ["Eve", "Carol", "Alice"]],
    ["several tags must all match", { tag: ["vip", "beta"] }, ["Eve", "Alice"]],
    ["segment", { segment: "enterprise" }, ["Dave", "Bob"]],
    ["several segments", { segment: ["enterprise", "emea"] }, ["Bob"]],
    ["lifecycle_stage", { lifecycle_stage: "customer" }, ["Carol", "Bob"]],
    ["no match", { email: "nobody@nowhere.test" }, []],
  ])("%s", async (_label, query, expected) => {
    expect(await names(query)).toEqual(expected);
  });

  it("created_after and created_before take RFC 3339 and Unix seconds, exclusive", async () => {
    expect(await names({ created_after: middleTime })).toEqual(["Eve", "Dave"]);
    expect(await names({ created_before: middleTime })).toEqual(["Carol", "Bob", "Alice"]);
    const unix = Math.floor(Date.parse(middleTime) / 1000) + 1;
    expect(await names({ created_after: String(unix) })).toEqual(["Eve", "Dave"]);
    const { body: eve } = await api.get(`/open/v1/contacts/${ids.Eve}`, { key });
    // Exclusive: a bound equal to a contact's creation time leaves it out.
    expect(await names({ created_after: eve.created_at })).toEqual([]);
    expect(await names({ created_before: eve.created_at })).not.toContain("Eve");
  });

  it("combines every filter", async () => {
    expect(
      await names({
        search: "acme",
        tag: "vip",
        segment: "smb",
        lifecycle_stage: "lead",
        email: "alice@acme.test",
        phone: "+1 555 010 0101",
        created_before: middleTime,
        created_after: "0",
      }),
    ).toEqual(["Alice"]);
    expect(await names({ tag: "beta", lifecycle_stage: "customer" })).toEqual(["Carol"]);
    expect(await names({ search: "acme", created_after: middleTime })).toEqual(["Dave"]);
    expect(await names({ segment: "smb", tag: "vip", created_after: middleTime })).toEqual([]);
  });

  it("rejects malformed filter values", async () => {
    const queries: Record<string, string | number>[] = [
      { created_after: "yesterday" },
      { created_before: "2026-13-45T00:00:00Z" },
      { created_after: "2026-01-01" },
      { limit: 0 },
      { limit: 101 },
      { limit: "ten" },
      { limit: 1.5 },
      { starting_after: "not-an-id" },
      { starting_after: "tkt_0VbeYDRKD1TvDlY414ApAt" },
    ];
    for (const query of queries) {
      const response = await api.get("/open/v1/contacts", { key, query });
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: Object.keys(query)[0] });
    }
  });

  it("rejects unknown query parameters", async () => {
    const response = await api.get("/open/v1/contacts", { key, query: { tags: "vip" } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_unknown", param: "tags" });
  });
});

describe("cursor paging", () => {
  let pagingKey: string;
  const created: string[] = [];
  /** Every third contact carries the tag `third`, to page through a filter. */
  const tagged: string[] = [];
  beforeAll(async () => {
    ({ key: pagingKey } = await newWorkspace());
    for (let i = 0; i < 27; i++) {
      const tags = i % 3 === 0 ? ["third"] : [];
      const { body } = await api.post("/open/v1/contacts", {
        key: pagingKey,
        body: { name: `Page ${i}`, tags },
      });
      created.push(body.id);
      if (tags.length > 0) tagged.push(body.id);
    }
  });

  const walk = (query: Record<string, string | number>) => walkPages("/open/v1/contacts", pagingKey, query);

  it("walks 27 contacts in pages of 10 with no gaps or repeats, newest first", async () => {
    expect(await walk({ limit: 10 })).toEqual([...created].reverse());
  });

  it("the default page size is 10 and has_more tells there is more", async () => {
    const { body } = await api.get("/open/v1/contacts", { key: pagingKey });
    expect(body.data).toHaveLength(10);
    expect(body.has_more).toBe(true);
  });

  it("pages through a filter one contact at a time to the end", async () => {
    expect(await walk({ limit: 1, tag: "third" })).toEqual([...tagged].reverse());
  });

  it("a cursor still works after its contact is deleted", async () => {
    // Its own workspace, so no other test sees the deletion.
    const { key: deleteKey } = await newWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      ids.push(
        (await api.post("/open/v1/contacts", { key: deleteKey, body: { name: `Gone ${i}` } })).body.id,
      );
    }
    const newestFirst = [...ids].reverse();
    const cursor = newestFirst[3] as string;
    expect((await api.delete(`/open/v1/contacts/${cursor}`, { key: deleteKey })).status).toBe(200);
    const next = await api.get("/open/v1/contacts", {
      key: deleteKey,
      query: { limit: 3, starting_after: cursor },
    });
    expect(next.status).toBe(200);
    expect(next.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst.slice(4, 7));
  });
});
