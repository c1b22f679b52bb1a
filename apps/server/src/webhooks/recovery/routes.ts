import { receives, type StoredEvent } from "../../events/model.js";
import { AppError, notFound } from "../../platform/errors.js";
import type { Handler } from "../../platform/http/operation.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import { toWebhookDelivery } from "../deliveries/store.js";
import { passesFilter } from "../endpoints/filter.js";
import { endpointDisabled } from "../endpoints/store.js";
import { previewRecovery } from "./preview.js";
import { resend } from "./resend.js";
import { type RecoveryStores, toWebhookRecovery, type WebhookRecoveryDoc } from "./store.js";
import { appliedWindow, askedWindow } from "./window.js";

type Kit = RouteKit<RecoveryStores>;

/**
 * Deliveries queued again: a recovery of an endpoint's window of events, and a resend of one event
 * to its endpoints (`/open/v1/events/{id}/resend`; the event itself is looked up as the events API
 * does, retention included, events/events.ts).
 */
export function recoveryRoutes(kit: Kit): void {
  mountHandlers(kit, { recoverWebhookEndpoint, getWebhookRecovery, resendEvent });
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

/**
 * The endpoint a resend names: one of the event's workspace, enabled, and a receiver of the event
 * (subscribed to its type, and passed by its content filter).
 */
async function namedReceiver(store: RecoveryStores, event: StoredEvent, endpointId: string) {
  const endpoint = await store.webhookEndpoints.find(endpointId);
  if (!endpoint || endpoint.workspace_id !== event.workspace_id) {
    throw notFound("webhook endpoint", endpointId, "endpoint_id");
  }
  if (endpoint.status !== "enabled") throw endpointDisabled(endpoint, "endpoint_id");
  if (!receives(endpoint, event) || !passesFilter(endpoint, event)) {
    const why =
      event.about_endpoint_id === endpoint._id
        ? `is what this ${event.type} event is about, and never receives it`
        : !receives(endpoint, event)
          ? `is not subscribed to ${event.type} events`
          : "has a content filter this event does not pass (change the endpoint's filter to send it)";
    throw new AppError(400, "parameter_invalid", `Webhook endpoint ${endpoint._id} ${why}.`, {
      param: "endpoint_id",
    });
  }
  return endpoint;
}

function recoverWebhookEndpoint({ store, metrics, now: clock }: Kit): Handler<"recoverWebhookEndpoint"> {
  return async ({ ctx, id, body }) => {
    const request = body ?? {};
    // The window ends at the server's now (the database's), the same for every API process.
    const now = clock();
    const asked = askedWindow(request, now);
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    const window = await appliedWindow(asked, endpoint, store, now);
    // A preview queues nothing, so a disabled endpoint may have one: what enabling and recovering would send.
    if (request.dry_run) return { status: 200, body: await previewRecovery(store, endpoint, window) };
    if (endpoint.status !== "enabled") throw endpointDisabled(endpoint, "id");
    const recovery = await store.webhookRecoveries.start(endpoint, window);
    metrics?.recovery();
    return { status: 202, body: await shown(store, recovery) };
  };
}

function getWebhookRecovery({ store }: Kit): Handler<"getWebhookRecovery"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: await shown(store, await store.webhookRecoveries.get(workspaceOf(ctx), id)),
  });
}

/** A recovery with its deliveries counted now (a retried start may find some already sent). */
async function shown(store: RecoveryStores, recovery: WebhookRecoveryDoc) {
  return toWebhookRecovery(recovery, await store.webhookDeliveries.countForRecovery(recovery));
}
