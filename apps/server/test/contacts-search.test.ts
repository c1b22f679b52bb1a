import { beforeEach, describe, expect, it } from "vitest";
import { type ApiResponse, api, newWorkspace, type RequestOptions } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";
import { allEvents } from "./helpers/events.js";

/**
 * The contact list's `search` (docs/api.md, "Search"): word prefixes of name, email and phone
 * digits, case- and accent-insensitive, several words all matching; kept as keys every write
 * makes (create, PATCH, batch upsert, merge), hidden from every answer and event, and served in
 * the list's order with its cursor. Every answer is checked against the spec by `api`.
 */

const database = runDatabase();
let key: string;
let workspaceId: string;

beforeEach(async () => {
  ({ key, workspaceId } = await newWorkspace());
});

/** A request whose answer must not show the stored keys. */
async function call(
  method: keyof typeof api,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse> {
  const response = await api[method](path, { key, ...options });
  expect(JSON.stringify(response.body)).not.toContain("search_keys");
  return response;
}

const create = async (body: Record<string, unknown>): Promise<string> => {
  const response = await call("post", "/open/v1/contacts", { body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.id;
};

/** The names `search` finds, newest first, one page of up to 100. */
async function found(search: string): Promise<string[]> {
  const response = await call("get", "/open/v1/contacts", { query: { search, limit: 100 } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.map((contact: { name: string }) => contact.name);
}

describe("search matches", () => {
  it("finds word prefixes of name, email and phone digits, whatever the case and accents", async () => {
    await create({ name: "José Núñez", email: "jose.nunez@acme-corp.io", phone: "+1 (555) 010-2030" });
    await create({ name: "Ana Lima", email: "ana_lima+news@example.org" });
    await create({ name: "JOSEPHINE Baker" });
    await create({ name: "Zoë Ångström" });

    expect(await found("jos")).toEqual(["JOSEPHINE Baker", "José Núñez"]);
    expect(await found("jose")).toEqual(["JOSEPHINE Baker", "José Núñez"]);
    expect(await found("José")).toEqual(["JOSEPHINE Baker", "José Núñez"]);
    expect(await found("JOSÉ núñ")).toEqual(["José Núñez"]);
    expect(await found("nunez")).toEqual(["José Núñez"]);
    expect(await found("zoe angs")).toEqual(["Zoë Ångström"]);
    // Email: local part, domain, split on @ . - _ +; a whole address reads as its words.
    expect(await found("acme")).toEqual(["José Núñez"]);
    expect(await found("corp")).toEqual(["José Núñez"]);
    expect(await found("news")).toEqual(["Ana Lima"]);
    expect(await found("exam")).toEqual(["Ana Lima"]);
    expect(await found("ana_lima+news@example.org")).toEqual(["Ana Lima"]);
    // Phone digits from any group of the number as written, and the E.164 digits.
    expect(await found("555010")).toEqual(["José Núñez"]);
    expect(await found("2030")).toEqual(["José Núñez"]);
    expect(await found("+15550102030")).toEqual(["José Núñez"]);
    expect(await found("+1 (555) 010-2030")).toEqual(["José Núñez"]);
  });

  it("matches only at word starts, and every word must match", async () => {
    await create({ name: "Ada Lovelace", email: "ada@engine.test" });
    await create({ name: "Ada Byron" });
    expect(await found("velace")).toEqual([]);
    expect(await found("ngine")).toEqual([]);
    expect(await found("da")).toEqual([]);
    expect(await found("ada")).toEqual(["Ada Byron", "Ada Lovelace"]);
    expect(await found("ada love")).toEqual(["Ada Lovelace"]);
    expect(await found("love ada")).toEqual(["Ada Lovelace"]);
    expect(await found("ada byr engine")).toEqual([]);
    // No letter or digit: no word to look for, nothing found.
    expect(await found(".*")).toEqual([]);
  });
});

describe("search follows every write", () => {
  it("follows a PATCH: the old name is no longer found, the new one is", async () => {
    const id = await create({ name: "Old Name", email: "first@old.test" });
    const patched = await call("patch", `/open/v1/contacts/${id}`, {
      body: { name: "Fresh Name", email: "second@new.test", phone: "+44 20 7946 0958" },
    });
    expect(patched.status).toBe(200);
    expect(await found("old")).toEqual([]);
    expect(await found("first")).toEqual([]);
    expect(await found("fresh")).toEqual(["Fresh Name"]);
    expect(await found("second new")).toEqual(["Fresh Name"]);
    expect(await found("7946")).toEqual(["Fresh Name"]);
    await call("patch", `/open/v1/contacts/${id}`, { body: { phone: null, email: null } });
    expect(await found("7946")).toEqual([]);
    expect(await found("second")).toEqual([]);
    expect(await found("fresh")).toEqual(["Fresh Name"]);
  });

  it("keeps the keys of batch upserts (created and updated items) and of a merge's survivor", async () => {
    await create({ name: "Batch Before", email: "before@batch.test" });
    const batch = await call("post", "/open/v1/contacts/batch", {
      body: {
        match: "email",
        contacts: [
          { name: "Batch Created", email: "created@batch.test" },
          { name: "Batch Renamed", email: "before@batch.test" },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(await found("created")).toEqual(["Batch Created"]);
    expect(await found("renamed")).toEqual(["Batch Renamed"]);
    expect(await found("before")).toEqual(["Batch Renamed"]);
    expect(await found("batch")).toEqual(["Batch Created", "Batch Renamed"]);

    const survivor = await create({ name: "Grace Hopper" });
    const donor = await create({ name: "G. Hopper", email: "grace@navy.test", phone: "+1 555 010 7777" });
    const merged = await call("post", `/open/v1/contacts/${survivor}/merge`, {
      body: { contact_ids: [donor] },
    });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    // The survivor is found by the email and phone it took over; the merged contact is gone.
    expect(await found("navy")).toEqual(["Grace Hopper"]);
    expect(await found("5550107777")).toEqual(["Grace Hopper"]);
    expect(await found("hopper")).toEqual(["Grace Hopper"]);
  });
});

describe("search pages, hides its keys and bounds its query", () => {
  it("pages through a result with the cursor, each match once, in the list's order", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 23; index++) {
      ids.push(await create({ name: `Pager ${index}` }));
      if (index % 4 === 0) await create({ name: `Other ${index}` });
    }
    const seen: string[] = [];
    for (let after: string | undefined; ; ) {
      const query = { search: "pag", limit: 5, ...(after ? { starting_after: after } : {}) };
      const page = await call("get", "/open/v1/contacts", { query });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((contact: { id: string }) => contact.id));
      after = seen.at(-1);
      if (!page.body.has_more) break;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it("stores the keys with the contact and never shows them, in answers or events", async () => {
    const id = await create({ name: "Hidden Keys", email: "hidden@keys.test" });
    await call("patch", `/open/v1/contacts/${id}`, { body: { name: "Hidden Still" } });
    await call("get", `/open/v1/contacts/${id}`);
    await call("get", "/open/v1/contacts", { query: { updated_after: "0" } });
    const events = await allEvents(key);
    expect(events.map((event) => event.type)).toEqual(["contact.updated", "contact.created"]);
    expect(JSON.stringify(events)).not.toContain("search_keys");
    // They are there: the test above would pass for a contact stored without them.
    const stored = await (await database())
      .collection<{ _id: string; workspace_id: string; search_keys?: string[] }>("contacts")
      .findOne({ _id: id, workspace_id: workspaceId });
    expect(stored?.search_keys).toEqual(expect.arrayContaining(["hid", "hidden", "still", "keys"]));
    expect(stored?.search_keys).not.toContain("name");
  });

  it("refuses a query of too many words with 400 naming `search`", async () => {
    await create({ name: "A B C D E F G H I" });
    expect(await found("a b c d e f g h")).toEqual(["A B C D E F G H I"]);
    const response = await call("get", "/open/v1/contacts", { query: { search: "a b c d e f g h i" } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "search" });
    // Beyond the spec's length it is refused before the store (the schema's maxLength).
    const long = await call("get", "/open/v1/contacts", { query: { search: "x".repeat(201) } });
    expect(long.status).toBe(400);
    expect(long.body.error.param).toBe("search");
    // A long word is cut to the longest key: still found, and no key longer is stored.
    await create({ name: "Supercalifragilisticexpialidocious" });
    expect(await found("supercalifragilisticexpialidocious")).toEqual(["Supercalifragilisticexpialidocious"]);
  });
});
