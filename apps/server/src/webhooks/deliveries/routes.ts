import { notFound } from "../../platform/errors.js";
import type { Handler } from "../../platform/http/operation.js";
import { parsePage, toPage } from "../../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import type { WebhookStores } from "../stores.js";
import { toDeliveryAttempt } from "./attempts.js";
import { toWebhookDelivery } from "./store.js";

type Kit = RouteKit<WebhookStores>;

/**
 * The deliveries and attempts of an endpoint and of an event (`/open/v1/events/{id}/deliveries`: the
 * event itself is looked up as the events API does, retention included, events/events.ts).
 */
export function deliveryRoutes(kit: Kit): void {
  mountHandlers(kit, { listWebhookEndpointAttempts, listWebhookEndpointDeliveries, listEventDeliveries });
}

/**
 * docs/design.md, Conversations and admin: the operator's view of webhook endpoints of any workspace: read an
 * endpoint's delivery attempts.
 */
export function adminDeliveryRoutes(kit: Kit): void {
  mountHandlers(kit, { listDeliveryAttempts });
}

function listDeliveryAttempts({ store }: Kit): Handler<"listDeliveryAttempts"> {
  return async ({ id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.find(id);
    if (!endpoint) throw notFound("webhook endpoint", id);
    const docs = await store.deliveryAttempts.list(endpoint, page);
    return { status: 200, body: toPage(docs, page.limit, toDeliveryAttempt) };
  };
}

function listWebhookEndpointAttempts({ store }: Kit): Handler<"listWebhookEndpointAttempts"> {
  return async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    const docs = await store.deliveryAttempts.list(endpoint, page);
    return { status: 200, body: toPage(docs, page.limit, toDeliveryAttempt) };
  };
}

function listWebhookEndpointDeliveries({ store }: Kit): Handler<"listWebhookEndpointDeliveries"> {
  return async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    const filters = { status: query.status, eventType: query.event_type };
    const docs = await store.webhookDeliveries.listForEndpoint(endpoint, filters, page);
    return { status: 200, body: toPage(docs, page.limit, toWebhookDelivery) };
  };
}

function listEventDeliveries({ store }: Kit): Handler<"listEventDeliveries"> {
  return async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const event = await store.events.get(workspaceOf(ctx), id);
    const docs = await store.webhookDeliveries.listForEvent(event, page);
    return { status: 200, body: toPage(docs, page.limit, toWebhookDelivery) };
  };
}
