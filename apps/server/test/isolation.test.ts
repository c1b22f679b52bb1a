import { beforeAll, describe, expect, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";

let mine: string;
let theirs: string;
let theirContact: { id: string; email: string };
/** My contacts created just before and just after theirs: ids sort by creation time. */
let mineBefore: string;
let mineAfter: string;

beforeAll(async () => {
  ({ key: mine } = await newWorkspace());
  ({ key: theirs } = await newWorkspace());
  mineBefore = (await api.post("/open/v1/contacts", { key: mine, body: { name: "Mine before" } })).body.id;
  const created = await api.post("/open/v1/contacts", {
    key: theirs,
    body: {
      name: "Their Contact",
      email: "shared@example.com",
      phone: "+1 555 010 9999",
      tags: ["shared-tag"],
      segments: ["shared-segment"],
      lifecycle_stage: "shared-stage",
      external_ids: { crm: "shared-1" },
    },
  });
  theirContact = created.body;
  mineAfter = (await api.post("/open/v1/contacts", { key: mine, body: { name: "Mine after" } })).body.id;
});

const idsOf = (response: { body: { data: { id: string }[] } }) => response.body.data.map((c) => c.id);

describe("workspace isolation", () => {
  it("another workspace's contact is 404 for get, patch and delete, exactly like a missing one", async () => {
    const path = `/open/v1/contacts/${theirContact.id}`;
    for (const response of [
      await api.get(path, { key: mine }),
      await api.patch(path, { key: mine, body: { name: "Hijacked" } }),
      await api.delete(path, { key: mine }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("resource_missing");
    }
    const untouched = await api.get(path, { key: theirs });
    expect(untouched.body.name).toBe("Their Contact");
  });

  it("lists and every filter see only the key's workspace", async () => {
    // Each filter matches their contact and none of mine; the unfiltered lists show mine only.
    const cases: [Record<string, string>, () => string[]][] = [
      [{}, () => [mineAfter, mineBefore]],
      [{ created_after: "0" }, () => [mineAfter, mineBefore]],
      [{ email: "shared@example.com" }, () => []],
      [{ phone: "+1 555 010 9999" }, () => []],
      [{ search: "Their" }, () => []],
      [{ tag: "shared-tag" }, () => []],
      [{ segment: "shared-segment" }, () => []],
      [{ lifecycle_stage: "shared-stage" }, () => []],
    ];
    for (const [query, expected] of cases) {
      const response = await api.get("/open/v1/contacts", { key: mine, query: { limit: 100, ...query } });
      expect(response.status).toBe(200);
      expect(idsOf(response), JSON.stringify(query)).toEqual(expected());
    }
    // The same filters do find it in its own workspace, so the empty answers above mean something.
    const own = await api.get("/open/v1/contacts", { key: theirs, query: { tag: "shared-tag" } });
    expect(idsOf(own)).toEqual([theirContact.id]);
  });

  it("a cursor from another workspace is only a position: it pages my contacts, never theirs", async () => {
    const response = await api.get("/open/v1/contacts", {
      key: mine,
      query: { starting_after: theirContact.id },
    });
    expect(response.status).toBe(200);
    // Only my contact older than theirs: the cursor was applied, and nothing of theirs shows.
    expect(idsOf(response)).toEqual([mineBefore]);
  });

  it("email and external ids are unique per workspace, not globally", async () => {
    const created = await api.post("/open/v1/contacts", {
      key: mine,
      body: { name: "Mine", email: "shared@example.com", external_ids: { crm: "shared-1" } },
    });
    expect(created.status).toBe(201);
  });

  it("idempotency keys are scoped to the workspace", async () => {
    const headers = { "Idempotency-Key": "same-key-both-workspaces" };
    const a = await api.post("/open/v1/contacts", { key: mine, body: { name: "Idem" }, headers });
    const b = await api.post("/open/v1/contacts", { key: theirs, body: { name: "Idem" }, headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(a.body.id).not.toBe(b.body.id);
  });
});
