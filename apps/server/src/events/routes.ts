import { parsePage, toPage } from "../platform/http/paging.js";
import { type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { eventCatalog } from "./catalog.js";
import { type Events, toEvent } from "./events.js";

/**
 * The events API: what webhooks carried (or would have), readable for the retention period.
 * Retention is the store's rule (events/events.ts): `get` and `list` see only kept events.
 */
export function eventRoutes({ op, store, openapi }: RouteKit<{ events: Events }>): void {
  // The catalog is the spec's, read once at start-up (events/catalog.ts).
  const eventTypes = eventCatalog(openapi.dereferenced);
  op("listEventTypes", async () => ({
    status: 200,
    body: { object: "list", data: eventTypes, has_more: false },
  }));

  op("listEvents", async ({ ctx, query }) => {
    const page = parsePage(query);
    const docs = await store.events.list(workspaceOf(ctx), { types: query.type }, page);
    return { status: 200, body: toPage(docs, page.limit, toEvent) };
  });

  op("getEvent", async ({ ctx, id }) => ({
    status: 200,
    body: toEvent(await store.events.get(workspaceOf(ctx), id)),
  }));
}
