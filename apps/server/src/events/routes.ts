import type { Handler } from "../platform/http/operation.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { eventCatalog } from "./catalog.js";
import { type Events, toEvent } from "./events.js";

type Kit = RouteKit<{ events: Events }>;

/**
 * The events API: what webhooks carried (or would have), readable for the retention period.
 * Retention is the store's rule (events/events.ts): `get` and `list` see only kept events.
 */
export function eventRoutes(kit: Kit): void {
  mountHandlers(kit, { listEventTypes, listEvents, getEvent });
}

function listEventTypes({ openapi }: Kit): Handler<"listEventTypes"> {
  // The catalog is the spec's, read once at start-up (events/catalog.ts).
  const eventTypes = eventCatalog(openapi.dereferenced);
  return async () => ({ status: 200, body: { object: "list", data: eventTypes, has_more: false } });
}

function listEvents({ store }: Kit): Handler<"listEvents"> {
  return async ({ ctx, query }) => {
    const page = parsePage(query);
    const docs = await store.events.list(workspaceOf(ctx), { types: query.type }, page);
    return { status: 200, body: toPage(docs, page.limit, toEvent) };
  };
}

function getEvent({ store }: Kit): Handler<"getEvent"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: toEvent(await store.events.get(workspaceOf(ctx), id)),
  });
}
