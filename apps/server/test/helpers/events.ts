import type { Db } from "mongodb";
import { expect } from "vitest";
import { api } from "./api.js";
import { eventually } from "./server-process.js";

/** An event as the events API answers it. */
export interface EventBody {
  id: string;
  object: "event";
  type: string;
  created: number;
  data: { id: string; object: string } & Record<string, unknown>;
  previous_attributes?: Record<string, unknown>;
}

/** Every event of the workspace the key sees, newest first, walking all pages. */
export async function allEvents(
  key: string,
  query: Record<string, string | string[]> = {},
  baseUrl?: string,
) {
  const events: EventBody[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await api.get("/open/v1/events", {
      key,
      baseUrl,
      query: { limit: "100", ...query, ...(cursor ? { starting_after: cursor } : {}) },
    });
    expect(page.status).toBe(200);
    events.push(...(page.body.data as EventBody[]));
    if (!page.body.has_more) return events;
    cursor = events.at(-1)?.id;
  }
}

/** The events of one resource (by `data.id`), oldest first. */
export async function eventsAbout(key: string, resourceId: string, type?: string): Promise<EventBody[]> {
  const events = await allEvents(key, type ? { type } : {});
  return events.filter((event) => event.data.id === resourceId).reverse();
}

/** The one event of `type` about `resourceId`; fails when there is none or more than one. */
export async function theEvent(key: string, type: string, resourceId: string): Promise<EventBody> {
  const events = await eventsAbout(key, resourceId, type);
  expect(events, `${type} events about ${resourceId}`).toHaveLength(1);
  const event = events[0] as EventBody;
  expect(event).toMatchObject({ object: "event", type });
  expect(event.id).toMatch(/^evt_[0-9A-Za-z]+$/);
  // `created` is Unix seconds, within the last minute.
  expect(Number.isInteger(event.created)).toBe(true);
  expect(Math.abs(event.created - Date.now() / 1000)).toBeLessThan(60);
  const fetched = await api.get(`/open/v1/events/${event.id}`, { key });
  expect(fetched.status).toBe(200);
  expect(fetched.body).toEqual(event);
  return event;
}

/**
 * Waits until no record of the workspace carries an event still to relay. A write answers once its
 * events are recorded; their hooks (the webhook fan-out, which adds deliveries) run after it, in
 * the background, and the relay removes an event's pending copy only once they ran. For a test
 * that compares what the API reads before and after requests that must change nothing.
 */
export async function relayed(db: Db, workspaceId: string): Promise<void> {
  const collections = await db.listCollections({}, { nameOnly: true }).toArray();
  const carrying = { workspace_id: workspaceId, "pending_events.0": { $exists: true } };
  await eventually(
    () =>
      Promise.all(collections.map(({ name }) => db.collection(name).countDocuments(carrying, { limit: 1 }))),
    (counts) => counts.every((count) => count === 0),
    `the relay of workspace ${workspaceId}'s events`,
  );
}
