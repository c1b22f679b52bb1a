import { toEvent } from "../db/events.js";
import { parsePage, toPage } from "../http/paging.js";
import { type RouteKit, workspaceOf } from "./kit.js";

/** The events API: what webhooks carried (or would have), readable for the retention period. */
export function eventRoutes({ op, store }: RouteKit): void {
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
