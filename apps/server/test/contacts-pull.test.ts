import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { walkPages } from "./helpers/paging.js";
import { newCopy, pullInto } from "./helpers/pull.js";

// The shared test server's settle time (SYNC_SETTLE_MS default): pages younger than this wait.
const SETTLE_MS = 1_000;

const byPosition = (a: { updated_at: string; id: string }, b: { updated_at: string; id: string }) =>
  a.updated_at.localeCompare(b.updated_at) || a.id.localeCompare(b.id);

/** A new workspace with 25 contacts, every other one tagged "odd"; `created` gets them in order. */
async function workspaceOf25Contacts(created: { id: string; updated_at: string }[]): Promise<string> {
  const { key } = await newWorkspace();
  for (let n = 0; n < 25; n++) {
    const { body } = await api.post("/open/v1/contacts", {
      key,
      body: { name: `Pull ${n}`, email: `pull-${n}@example.com`, tags: n % 2 ? ["odd"] : [] },
    });
    created.push(body);
  }
  return key;
}

// The tests only read the shared 25 contacts: they run at once.
describe.concurrent("incremental pull of contacts", () => {
  let key: string;
  const created: { id: string; updated_at: string }[] = [];

  beforeAll(async () => {
    key = await workspaceOf25Contacts(created);
  });

  it("returns every contact once, oldest change first, page by page", async ({ expect }) => {
    const copy = newCopy();
    const cursor = await pullInto("/open/v1/contacts", key, copy, { updated_after: "0" }, 10);
    expect(copy.pages).toBe(3);
    expect(copy.seen).toEqual([...created].sort(byPosition).map((c) => `${c.id}@${c.updated_at}`));
    expect(copy.deleted).toEqual([]);

    // Caught up: the kept cursor gives an empty page and itself back.
    const again = await api.get("/open/v1/contacts", { key, query: { cursor } });
    expect(again.body).toMatchObject({ data: [], deleted: [], has_more: false, next_cursor: cursor });
  });

  it("combines with the list filters, and `updated_after` is exclusive", async ({ expect }) => {
    const odd = await api.get("/open/v1/contacts", {
      key,
      query: { updated_after: "0", tag: "odd", limit: 100 },
    });
    expect(odd.body.data.every((c: { tags: string[] }) => c.tags.includes("odd"))).toBe(true);
    expect(odd.body.data.length).toBeGreaterThan(0);

    const last = [...created].sort(byPosition).at(-1) as { updated_at: string };
    const after = await api.get("/open/v1/contacts", {
      key,
      query: { updated_after: last.updated_at, limit: 100 },
    });
    expect(after.body.data.map((c: { updated_at: string }) => c.updated_at > last.updated_at)).not.toContain(
      false,
    );
  });

  it("refuses a pull mixed with newest-first paging, both starts, or a cursor not its own", async ({
    expect,
  }) => {
    const cases: [Record<string, string>, string][] = [
      [{ updated_after: "0", cursor: "MS4wLg" }, "cursor"],
      [{ updated_after: "0", starting_after: created[0]?.id as string }, "starting_after"],
      [{ cursor: "bm90LWEtY3Vyc29y" }, "cursor"],
      [{ cursor: "MS4xMjMueA" }, "cursor"],
      [{ updated_after: "yesterday" }, "updated_after"],
    ];
    for (const [query, param] of cases) {
      const response = await api.get("/open/v1/contacts", { key, query });
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param });
    }
  });

  it("keeps the newest-first list as it was, without pull fields", async ({ expect }) => {
    const page = await api.get("/open/v1/contacts", { key, query: { limit: 3 } });
    expect(Object.keys(page.body).sort()).toEqual(["data", "has_more", "object"]);
  });
});

// It updates and deletes contacts: in a workspace of its own, so the shared one above stays as made.
describe.concurrent("incremental pull of contacts, in a workspace that changes", () => {
  it("a later run gets only what changed since, updates and deletions in one order", async ({ expect }) => {
    const own: { id: string; updated_at: string }[] = [];
    const key = await workspaceOf25Contacts(own);
    const copy = newCopy();
    const cursor = await pullInto("/open/v1/contacts", key, copy, { updated_after: "0" }, 100);
    const [first, second] = own;
    const patched = await api.patch(`/open/v1/contacts/${first?.id}`, {
      key,
      body: { lifecycle_stage: "customer" },
    });
    expect((await api.delete(`/open/v1/contacts/${second?.id}`, { key })).status).toBe(200);

    const next = newCopy();
    await pullInto("/open/v1/contacts", key, next, { cursor }, 10);
    expect(next.seen).toEqual([`${first?.id}@${patched.body.updated_at}`]);
    expect(next.deleted).toEqual([second?.id]);
    const page = await api.get("/open/v1/contacts", { key, query: { cursor } });
    expect(page.body.deleted).toEqual([
      { id: second?.id, object: "contact", deleted: true, deleted_at: expect.any(String), merged_into: null },
    ]);
    // The deletion comes after the update it followed.
    expect(page.body.deleted[0].deleted_at >= patched.body.updated_at).toBe(true);
  });
});

// This block and the next have a workspace each and mostly wait on pulls: they run at once, with the first.
describe.concurrent("a pull while contacts change", () => {
  it("misses nothing and repeats nothing unchanged: the copy ends equal to the workspace", async ({
    expect,
  }) => {
    const { key } = await newWorkspace();
    const ids: string[] = [];
    for (let n = 0; n < 40; n++) {
      const { body } = await api.post("/open/v1/contacts", { key, body: { name: `Live ${n}` } });
      ids.push(body.id);
    }
    const copy = newCopy();
    let writing = true;
    const writes = (async () => {
      for (let round = 0; round < 12; round++) {
        const victim = ids[round * 3] as string;
        await Promise.all([
          // Updates of old and new contacts, creations and a deletion, all racing the pull.
          ...[1, 7, 20, 39].map((i) =>
            api.patch(`/open/v1/contacts/${ids[(i + round) % ids.length]}`, {
              key,
              body: { custom_fields: { round } },
            }),
          ),
          api.post("/open/v1/contacts", { key, body: { name: `Born ${round}` } }),
          api.delete(`/open/v1/contacts/${victim}`, { key }),
        ]);
        await sleep(40);
      }
      writing = false;
    })();
    let cursor: string | undefined;
    while (writing) {
      cursor = await pullInto(
        "/open/v1/contacts",
        key,
        copy,
        cursor ? { cursor } : { updated_after: "0" },
        7,
      );
    }
    await writes;
    // Every write has committed: once settled, one more run catches up completely.
    await sleep(SETTLE_MS);
    await pullInto("/open/v1/contacts", key, copy, cursor ? { cursor } : { updated_after: "0" }, 7);

    // Nothing twice: a record comes again only with a newer `updated_at`.
    expect(new Set(copy.seen).size).toBe(copy.seen.length);
    // Nothing missed: the copy is the workspace, every contact at its latest version.
    const live = await walkPages("/open/v1/contacts", key, { limit: 100 });
    expect([...copy.records.keys()].sort()).toEqual([...live].sort());
    for (const id of live) {
      const { body } = await api.get(`/open/v1/contacts/${id}`, { key });
      expect(copy.records.get(id)).toEqual(body);
    }
    expect(copy.deleted.length).toBe(12);
  });
});

describe.concurrent("incremental pull of tickets", () => {
  it("pulls changed tickets and deleted ones", async ({ expect }) => {
    const { key } = await newWorkspace();
    const tickets: string[] = [];
    for (let n = 0; n < 4; n++) {
      const { body } = await api.post("/open/v1/tickets", { key, body: { subject: `T${n}` } });
      tickets.push(body.id);
    }
    const copy = newCopy();
    const cursor = await pullInto("/open/v1/tickets", key, copy, { updated_after: "0" }, 3);
    expect([...copy.records.keys()]).toEqual(tickets);

    await api.patch(`/open/v1/tickets/${tickets[0]}`, { key, body: { status: "Solved" } });
    await api.delete(`/open/v1/tickets/${tickets[1]}`, { key });
    const next = newCopy();
    await pullInto("/open/v1/tickets", key, next, { cursor }, 3);
    expect([...next.records.keys()]).toEqual([tickets[0]]);
    expect(next.records.get(tickets[0] as string)?.status).toBe("Solved");
    expect(next.deleted).toEqual([tickets[1]]);
  });
});
