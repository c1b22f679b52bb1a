import type { Context } from "koa";
import { AppError, notFound } from "../platform/errors.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import { type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { toWebhookDelivery } from "../webhooks/deliveries.js";
import { endpointDisabled, resend } from "../webhooks/recovery.js";
import { isSubscribed } from "./model.js";
import { toEvent } from "./store.js";

/** The events API: what webhooks carried (or would have), readable for the retention period. */
export function eventRoutes({ op, store, config, metrics }: RouteKit): void {
  /** An event of the workspace still within retention (the sweep may not have removed an older one yet). */
  const keptEvent = async (ctx: Context, id: string) => {
    const event = await store.events.get(workspaceOf(ctx), id);
    if (event.created_at.getTime() < Date.now() - config.eventRetentionMs) throw notFound("event", id);
    return event;
  };

  op("listEvents", async ({ ctx, query }) => {
    const page = parsePage(query);
    const docs = await store.events.list(workspaceOf(ctx), { types: query.type }, page);
    return { status: 200, body: toPage(docs, page.limit, toEvent) };
  });

  op("getEvent", async ({ ctx, id }) => ({ status: 200, body: toEvent(await keptEvent(ctx, id)) }));

  op("listEventDeliveries", async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const event = await keptEvent(ctx, id);
    const docs = await store.webhookDeliveries.listForEvent(event, page);
    return { status: 200, body: toPage(docs, page.limit, toWebhookDelivery) };
  });

  op("resendEvent", async ({ ctx, id, body }) => {
    const event = await keptEvent(ctx, id);
    const endpointId = body?.endpoint_id;
    let endpoints = [];
    if (endpointId === undefined) {
      endpoints = await store.webhookEndpoints.subscribedTo(event.workspace_id, event.type);
    } else {
      const endpoint = await store.webhookEndpoints.find(endpointId);
      if (!endpoint || endpoint.workspace_id !== event.workspace_id) {
        throw new AppError(
          404,
          "resource_missing",
          `No such webhook endpoint: '${endpointId}'.`,
          "endpoint_id",
        );
      }
      if (endpoint.status !== "enabled") throw endpointDisabled(endpoint, "endpoint_id");
      if (!isSubscribed(endpoint.events, event.type)) {
        throw new AppError(
          400,
          "parameter_invalid",
          `Webhook endpoint ${endpoint._id} is not subscribed to ${event.type} events.`,
          "endpoint_id",
        );
      }
      endpoints = [endpoint];
    }
    const queued = await resend(store, event, endpoints);
    metrics?.resend();
    return { status: 202, body: { object: "list", data: queued.map(toWebhookDelivery), has_more: false } };
  });
}
