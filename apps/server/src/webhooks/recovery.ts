import { type StoredEvent, subscribedTypes } from "../events/model.js";
import { DomainError } from "../platform/errors.js";
import { idTime, newId } from "../platform/ids.js";
import type { WebhookDeliveryDoc } from "./deliveries.js";
import type { DeliveryRequest } from "./delivery-queue.js";
import type { WebhookEndpointDoc } from "./endpoints.js";
import type { WebhookStores } from "./stores.js";

/**
 * Resend and recovery (docs/decisions.md, "Webhook deliveries, resend and recovery"): queue deliveries of stored events again, through the same
 * queue as the events' own deliveries (webhooks/delivery-queue.ts), so they carry the same bytes and event
 * id and get the normal retries. Both run in the request: the answer says what was queued, and
 * what is recorded before the answer is what a crash cannot lose (see docs/decisions.md).
 */

/** Events read, checked and queued per round trip. */
const RECOVERY_BATCH = 1000;

export function endpointDisabled(endpoint: Pick<WebhookEndpointDoc, "_id">, param: string): DomainError {
  return new DomainError(
    "conflict",
    "webhook_endpoint_disabled",
    `Webhook endpoint ${endpoint._id} is disabled; enable it (updateWebhookEndpoint with status "enabled") first.`,
    param,
  );
}

/** Queues the event again to `endpoints`; those with a pending delivery of it keep that one. */
export function resend(store: WebhookStores, event: StoredEvent, endpoints: WebhookEndpointDoc[]) {
  return store.deliveryQueue.queue(
    endpoints.map((endpoint) => ({ event, endpointId: endpoint._id })),
    { origin: "resend" },
  );
}

export interface RecoveryWindow {
  /** Events whose `created` is at or after this, to the second. */
  since: Date;
  /** … and at or before this. */
  until: Date;
}

/**
 * Queues, oldest event first, one delivery of every event of the window that the endpoint
 * subscribes to and that has no succeeded (or pending) delivery to it: which events are covered is
 * read once, then the window's events in id order, a batch at a time, the others queued in one
 * go. Safe to run twice at once: the one-pending index lets each event be queued by only one.
 */
export async function recover(
  store: WebhookStores,
  endpoint: WebhookEndpointDoc,
  window: RecoveryWindow,
): Promise<{ id: string; queued: number }> {
  const id = newId("rcv");
  // Events keep their time in whole seconds (their `created`).
  const since = new Date(Math.floor(window.since.getTime() / 1000) * 1000);
  const filter: Record<string, unknown> = {
    workspace_id: endpoint.workspace_id,
    created_at: { $gte: since, $lte: window.until },
  };
  const types = subscribedTypes(endpoint.events);
  if (types) filter.type = { $in: types };
  // Never an operational event about this endpoint (events/model.ts `receives`).
  filter.about_endpoint_id = { $ne: endpoint._id };
  const covered = await store.webhookDeliveries.coveredSince(endpoint._id, since);
  const events = store.events.collection.find(filter).sort({ _id: 1 }).batchSize(RECOVERY_BATCH);
  let queued = 0;
  let batch: StoredEvent[] = [];
  // Due at their event's time (in the past), so a worker takes them oldest event first. Events of
  // one millisecond share that time and Agenda's lock query breaks no ties, so each due time is
  // kept strictly after the one before: the events are read in id order, the due times follow it.
  let lastDue = 0;
  const dueAt = ({ event }: DeliveryRequest) => {
    lastDue = Math.max(idTime(event._id), lastDue + 1);
    return new Date(lastDue);
  };
  const flush = async () => {
    const missed = batch.filter((event) => !covered.has(event._id));
    const made: WebhookDeliveryDoc[] = await store.deliveryQueue.queue(
      missed.map((event) => ({ event, endpointId: endpoint._id })),
      { origin: "recover", recoveryId: id, dueAt },
    );
    queued += made.length;
    batch = [];
  };
  for await (const event of events) {
    batch.push(event);
    if (batch.length === RECOVERY_BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  return { id, queued };
}
