import { receives, type StoredEvent } from "../events/model.js";
import { AppError, notFound } from "../platform/errors.js";
import type { Handler } from "../platform/http/operation.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { toWebhookDelivery } from "./deliveries.js";
import { endpointDisabled, resend } from "./recovery.js";
import type { WebhookStores } from "./stores.js";

type Kit = RouteKit<WebhookStores>;

/**
 * The webhook side of one event (`/open/v1/events/{id}/…`): the deliveries it made, and a resend
 * to its endpoints. They live with the webhooks, whose records they read and write; the event
 * itself is looked up as the events API does, retention included (events/events.ts).
 */
export function eventDeliveryRoutes(kit: Kit): void {
  mountHandlers(kit, { listEventDeliveries, resendEvent });
}

function listEventDeliveries({ store }: Kit): Handler<"listEventDeliveries"> {
  return async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const event = await store.events.get(workspaceOf(ctx), id);
    const docs = await store.webhookDeliveries.listForEvent(event, page);
    return { status: 200, body: toPage(docs, page.limit, toWebhookDelivery) };
  };
}

function resendEvent({ store, metrics }: Kit): Handler<"resendEvent"> {
  return async ({ ctx, id, body }) => {
    const event = await store.events.get(workspaceOf(ctx), id);
    const endpointId = body?.endpoint_id;
    const endpoints =
      endpointId === undefined
        ? await store.webhookEndpoints.receiversOf(event)
        : [await namedReceiver(store, event, endpointId)];
    const queued = await resend(store, event, endpoints);
    metrics?.resend();
    return { status: 202, body: { object: "list", data: queued.map(toWebhookDelivery), has_more: false } };
  };
}

/** The endpoint a resend names: one of the event's workspace, enabled, and a receiver of the event. */
async function namedReceiver(store: WebhookStores, event: StoredEvent, endpointId: string) {
  const endpoint = await store.webhookEndpoints.find(endpointId);
  if (!endpoint || endpoint.workspace_id !== event.workspace_id) {
    throw notFound("webhook endpoint", endpointId, "endpoint_id");
  }
  if (endpoint.status !== "enabled") throw endpointDisabled(endpoint, "endpoint_id");
  if (!receives(endpoint, event)) {
    const why =
      event.about_endpoint_id === endpoint._id
        ? `is what this ${event.type} event is about, and never receives it`
        : `is not subscribed to ${event.type} events`;
    throw new AppError(400, "parameter_invalid", `Webhook endpoint ${endpoint._id} ${why}.`, {
      param: "endpoint_id",
    });
  }
  return endpoint;
}
