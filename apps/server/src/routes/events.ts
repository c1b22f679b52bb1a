import type { Context } from "koa";
import { toEvent } from "../db/events.js";
import { toWebhookDelivery } from "../db/webhook-deliveries.js";
import { endpointDisabled, resend } from "../delivery/recovery.js";
import { isSubscribed } from "../domain/events.js";
import { AppError } from "../errors.js";
import { parsePage, toPage } from "../http/paging.js";
import { type RouteKit, workspaceOf } from "./kit.js";

/** The events API: what webhooks carried (or would have), readable for the retention period. */
export function eventRoutes({ op, store, metrics }: RouteKit): void {
  // Retention is the store's rule (db/events.ts): `get` and `list` see only kept events.
  const keptEvent = (ctx: Context, id: string) => store.events.get(workspaceOf(ctx), id);

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
