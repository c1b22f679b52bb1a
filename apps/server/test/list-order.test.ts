import { beforeAll, describe, expect, it } from "vitest";
import { idTime } from "../src/platform/ids.js";
import { api, newWorkspace } from "./helpers/api.js";
import { eventually } from "./helpers/main-process.js";

// "Newest first" is the order things happened: events, and an endpoint's deliveries of them,
// written within one request or one after another, list in the order they were written, page by
// page; and a cursor of the older layout (one-second time plus a hash) still places a page.

let key: string;
let endpointId: string;
/** The contacts created, in the order they were written. */
const written: string[] = [];

const post = async (path: string, body: unknown, headers?: Record<string, string>) => {
  const response = await api.post(path, { key, body, headers });
  expect(response.status).toBeLessThan(300);
  return response.body;
};

beforeAll(async () => {
  ({ key } = await newWorkspace());
  // Never reached (`.invalid`): its deliveries are recorded all the same, which is what is listed.
  ({ id: endpointId } = await post("/open/v1/webhook-endpoints", {
    url: "https://list-order.invalid/hook",
    events: ["contact.created"],
  }));
  // Alone, with and without an Idempotency-Key (whose ids a request takes from a block of its
  // own), then twenty in one batch: the batch's events are written within the same second.
  for (let i = 0; i < 6; i++) {
    const headers = i % 2 ? { "Idempotency-Key": `list-order-${i}-${Date.now()}` } : undefined;
    written.push((await post("/open/v1/contacts", { name: `Alone ${i}` }, headers)).id);
  }
  const contacts = Array.from({ length: 20 }, (_, i) => ({
    name: `Batch ${i}`,
    email: `batch${i}@example.com`,
  }));
  const batch = await post("/open/v1/contacts/batch", { match: "email", contacts });
  written.push(...batch.data.map((r: { contact: { id: string } }) => r.contact.id));
});

/** Every item of a list, page by page (`limit` a page), following `starting_after`. */
async function listAll<T extends { id: string }>(path: string, query: Record<string, string | number>) {
  const items: T[] = [];
  for (;;) {
    const last = items.at(-1);
    const page = await api.get(path, {
      key,
      query: { ...query, ...(last ? { starting_after: last.id } : {}) },
    });
    expect(page.status).toBe(200);
    items.push(...page.body.data);
    if (!page.body.has_more) return items;
  }
}

const newestFirst = () => [...written].reverse();

describe("lists in the order things happened", () => {
  it("listEvents, page by page, newest first", async () => {
    const events = await listAll<{ id: string; data: { id: string } }>("/open/v1/events", {
      type: "contact.created",
      limit: 7,
    });
    expect(events.map((e) => e.data.id)).toEqual(newestFirst());
  });

  it("an endpoint's deliveries, page by page, in the order of their events", async () => {
    const path = `/open/v1/webhook-endpoints/${endpointId}/deliveries`;
    await eventually(
      () => listAll<{ id: string }>(path, { limit: 100 }),
      (all) => all.length === written.length,
      "every event's delivery",
    );
    const events = await listAll<{ id: string; data: { id: string } }>("/open/v1/events", {
      type: "contact.created",
      limit: 100,
    });
    const contactOf = new Map(events.map((e) => [e.id, e.data.id]));
    const deliveries = await listAll<{ id: string; event_id: string }>(path, { limit: 6 });
    expect(deliveries.map((d) => contactOf.get(d.event_id))).toEqual(newestFirst());
  });

  it("a cursor of the older layout (one-second time, then a hash) places a page by its time", async () => {
    const path = `/open/v1/webhook-endpoints/${endpointId}/deliveries`;
    const all = await listAll<{ id: string }>(path, { limit: 100 });
    const [newest, oldest] = [idTime(all[0]?.id as string), idTime(all.at(-1)?.id as string)];
    // The older ids: the second, then 14 characters of a hash.
    const older = (ms: number) =>
      `dlv_${encodeTime(Math.floor(ms / 1000) * 1000)}${"q3Zk9".repeat(3).slice(0, 14)}`;
    const after = await api.get(path, { key, query: { starting_after: older(newest + 1000), limit: 100 } });
    expect(after.status).toBe(200);
    expect(after.body.data.map((d: { id: string }) => d.id)).toEqual(all.map((d) => d.id));
    const before = await api.get(path, { key, query: { starting_after: older(oldest - 1000), limit: 100 } });
    expect(before.status).toBe(200);
    expect(before.body.data).toEqual([]);
  });
});

/** A time as ids carry it: eight base-62 digits of milliseconds, 0-9A-Za-z. */
function encodeTime(ms: number): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let out = "";
  for (let value = ms, i = 0; i < 8; i++, value = Math.floor(value / 62)) out = alphabet[value % 62] + out;
  return out;
}
