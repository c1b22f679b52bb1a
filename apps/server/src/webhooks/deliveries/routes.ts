import type { Events } from "../../events/events.js";
import { notFound } from "../../platform/errors.js";
import type { Handler } from "../../platform/http/operation.js";
import { parsePage, toPage } from "../../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import { type DeliveryAttempts, toDeliveryAttempt } from "./attempts.js";
import { toWebhookDelivery, type WebhookDeliveries } from "./store.js";

/** An endpoint as these routes look it up: whose it is (the endpoints room's store serves it). */
interface EndpointRef {
  _id: string;
  workspace_id: string;
}

/**
 * The stores these routes read. The endpoints are named by what is asked of them, not by their
 * store's class: the endpoints room reads deliveries (its stats), so deliveries import nothing of it.
 */
type Kit = RouteKit<{
  webhookEndpoints: {
    find(id: string): Promise<EndpointRef | null>;
    get(workspaceId: string, id: string): Promise<EndpointRef>;
  };
  deliveryAttempts: DeliveryAttempts;
  webhookDeliveries: WebhookDeliveries;
  events: Events;
}>;

/**
 * The deliveries and attempts of an endpoint and of an event (`/open/v1/events/{id}/deliveries`: the
 * event itself is looked up as the events API does, retention included, events/events.ts), and
 * the deliveries of several events at once (`/open/v1/webhook-deliveries?event_id=…`).
 */
export function deliveryRoutes(kit: Kit): void {
  mountHandlers(kit, {
    listWebhookEndpointAttempts,
    listWebhookEndpointDeliveries,
    listEventDeliveries,
    listWebhookDeliveries,
  });
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
    const docs = await store.deliveryAttempts.list(endpoint, page, query.delivery_id);
    return { status: 200, body: toPage(docs, page.limit, toDeliveryAttempt) };
  };
}

function listWebhookEndpointDeliveries({ store }: Kit): Handler<"listWebhookEndpointDeliveries"> {
  return async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    const filters = { status: query.status, eventType: query.event_type, recoveryId: query.recovery_id };
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

/**
 * The deliveries of up to 100 events (the spec bounds `event_id`). The events are not looked up:
 * an id of no event of the workspace is a filter matching nothing, as a list's filters are, and
 * the workspace in the query keeps other workspaces' deliveries out.
 */
function listWebhookDeliveries({ store }: Kit): Handler<"listWebhookDeliveries"> {
  return async ({ ctx, query }) => {
    const page = parsePage(query);
    const docs = await store.webhookDeliveries.listForEvents(workspaceOf(ctx), query.event_id, page);
    return { status: 200, body: toPage(docs, page.limit, toWebhookDelivery) };
  };
}
