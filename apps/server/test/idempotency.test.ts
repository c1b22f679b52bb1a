import { beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, api, newKey, newWorkspace } from "./helpers/api.js";

let key: string;
let workspaceId: string;
beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
});

const unique = () => `idem-${Date.now()}-${Math.random().toString(36).slice(2)}`;
/** Creates a contact with `body`, sending `idem` as its Idempotency-Key. */
const createWith = (idem: string, body: unknown) =>
  api.post("/open/v1/contacts", { key, body, headers: { "Idempotency-Key": idem } });
const countByName = async (name: string) =>
  (await api.get("/open/v1/contacts", { key, query: { search: name, limit: 100 } })).body.data.length;

describe("Idempotency-Key: the same request replayed", () => {
  it("replays the first response with Idempotent-Replayed and creates once", async () => {
    const idem = unique();
    const name = unique();
    const first = await createWith(idem, { name });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await createWith(idem, { name });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await countByName(name)).toBe(1);
  });

  it("the quoted form of a key is the same key", async () => {
    const idem = unique();
    const name = unique();
    const first = await createWith(idem, { name });
    const quoted = await createWith(`"${idem}"`, { name });
    expect(quoted.headers.get("idempotent-replayed")).toBe("true");
    expect(quoted.body.id).toBe(first.body.id);
  });

  it("key order in the body does not make another request", async () => {
    const idem = unique();
    const name = unique();
    await createWith(idem, { name, source: "a" });
    const reordered = await api.post("/open/v1/contacts", {
      key,
      rawBody: JSON.stringify({ source: "a", name }),
      headers: { "Idempotency-Key": idem, "Content-Type": "application/json" },
    });
    expect(reordered.headers.get("idempotent-replayed")).toBe("true");
  });

  it("the same key with another body is 422 idempotency_key_reused", async () => {
    const idem = unique();
    await createWith(idem, { name: "One" });
    const reused = await createWith(idem, { name: "Two" });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
  });
});

describe("Idempotency-Key: which answers are replayed, and to whom", () => {
  it("answers a replay to its caller only: another key of the workspace gets 422 idempotency_key_other_caller", async () => {
    const idem = unique();
    const name = unique();
    const first = await createWith(idem, { name });
    expect(first.status).toBe(201);
    const other = await newKey(workspaceId, ALL_SCOPES);
    for (const body of [{ name }, { name: `${name} too` }]) {
      const theirs = await api.post("/open/v1/contacts", {
        key: other,
        body,
        headers: { "Idempotency-Key": idem },
      });
      expect(theirs.status).toBe(422);
      expect(theirs.body.error).toMatchObject({
        code: "idempotency_key_other_caller",
        param: "Idempotency-Key",
      });
      expect(JSON.stringify(theirs.body)).not.toContain(first.body.id);
    }
    const mine = await createWith(idem, { name });
    expect(mine.headers.get("idempotent-replayed")).toBe("true");
    expect(mine.body.id).toBe(first.body.id);
    expect(await countByName(name)).toBe(1);
  });

  it("replays a stored 4xx answer too (the request ran and failed)", async () => {
    const email = `${unique()}@example.com`;
    await api.post("/open/v1/contacts", { key, body: { name: "Owner", email } });
    const idem = unique();
    const first = await createWith(idem, { name: "Clash", email });
    expect(first.status).toBe(409);
    const second = await createWith(idem, { name: "Clash", email });
    expect(second.status).toBe(409);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
  });

  it("a request rejected by validation keeps no key", async () => {
    const idem = unique();
    const invalid = await createWith(idem, {});
    expect(invalid.status).toBe(400);
    const valid = await createWith(idem, { name: unique() });
    expect(valid.status).toBe(201);
    expect(valid.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("Idempotency-Key: concurrent requests and the key's own form", () => {
  it("8 concurrent requests with one key create exactly one contact", async () => {
    const idem = unique();
    const name = unique();
    const results = await Promise.all(Array.from({ length: 8 }, () => createWith(idem, { name })));
    for (const result of results) expect([201, 409]).toContain(result.status);
    const created = results.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of results.filter((r) => r.status === 409)) {
      expect(r.body.error.code).toBe("idempotency_key_in_flight");
    }
    expect(await countByName(name)).toBe(1);
  });

  it("a key of non-ASCII characters is a key like any other (the spec allows them)", async () => {
    const idem = `clé-${unique()}`;
    const name = unique();
    const send = () => createWith(idem, { name });
    expect((await send()).status).toBe(201);
    expect((await send()).headers.get("idempotent-replayed")).toBe("true");
  });

  it.each([
    ["too long", "k".repeat(256)],
    ["too long, quoted", `"${"k".repeat(256)}"`],
    ["empty", ""],
    ["empty quoted", '""'],
    ["a quote inside", 'ab"c'],
    ["an unbalanced quote", '"abc'],
  ])("an invalid key (%s) is 400 and creates nothing", async (_label, header) => {
    const name = unique();
    const response = await api.post("/open/v1/contacts", {
      key,
      body: { name },
      headers: { "Idempotency-Key": header },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "Idempotency-Key" });
    expect(await countByName(name)).toBe(0);
  });
});
