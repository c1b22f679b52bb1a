import type { Context } from "koa";
import type { Config } from "../platform/config.js";
import { notFound } from "../platform/errors.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import { type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { type Events, toEvent } from "./store.js";

/**
 * An event of the request's workspace still within retention (the sweep may not have removed an
 * older one yet). The webhooks' routes of one event (its deliveries, a resend) find it here too.
 */
export async function keptEvent(
  events: Events,
  config: Pick<Config, "eventRetentionMs">,
  ctx: Context,
  id: string,
) {
  const event = await events.get(workspaceOf(ctx), id);
  if (event.created_at.getTime() < Date.now() - config.eventRetentionMs) throw notFound("event", id);
  return event;
}

/** The events API: what webhooks carried (or would have), readable for the retention period. */
export function eventRoutes({ op, store, config }: RouteKit<{ events: Events }>): void {
  op("listEvents", async ({ ctx, query }) => {
    const page = parsePage(query);
    const docs = await store.events.list(workspaceOf(ctx), { types: query.type }, page);
    return { status: 200, body: toPage(docs, page.limit, toEvent) };
  });

  op("getEvent", async ({ ctx, id }) => ({
    status: 200,
    body: toEvent(await keptEvent(store.events, config, ctx, id)),
  }));
}
