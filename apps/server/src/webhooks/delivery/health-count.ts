import type { Clock } from "../../platform/clock.js";
import type { Logger } from "../../platform/logger.js";
import type { HealthPending } from "../deliveries/store.js";
import type { WebhookEndpointDoc } from "../endpoints/store.js";
import type { WebhookStores as Store } from "../stores.js";

/**
 * Counts settled deliveries in their endpoints' health, each exactly once (docs/webhooks.md,
 * "What delivery guarantees, and under which faults"). The write that settles a delivery marks
 * it `health_pending` (fenced like every outcome: only the claim holding it writes); this then
 * applies the outcome the record holds — not what the counting worker believes happened — to the
 * endpoint (consecutive failures, `webhook_delivery.failed`, `.failing`, `.disabled`,
 * `.recovered`: webhooks/endpoints/health.ts), keyed by the delivery so a second count changes nothing,
 * and clears the mark. A worker that dies between the outcome and the count leaves the mark for
 * the sweep (`sweepHealth`), so a crash loses no count either.
 */

export interface HealthCounting {
  store: Store;
  logger: Logger;
  clock: Clock;
}

/**
 * Counts these deliveries' outcomes, in the order they settled; `known` holds endpoints already
 * read (the lane's own). Returns the endpoints a failure disabled (their pending deliveries are
 * the caller's to drop).
 */
export async function countHealth(
  { store, logger, clock }: HealthCounting,
  pending: HealthPending[],
  known: WebhookEndpointDoc[] = [],
): Promise<Set<string>> {
  const endpoints = new Map(known.map((endpoint) => [endpoint._id, endpoint]));
  const disabled = new Set<string>();
  for (const delivery of pending) {
    let endpoint = endpoints.get(delivery.endpoint_id);
    if (!endpoint) {
      endpoint = (await store.webhookEndpoints.find(delivery.endpoint_id)) ?? undefined;
      if (endpoint) endpoints.set(endpoint._id, endpoint);
    }
    if (!endpoint) continue; // deleted: nothing to count on
    if (delivery.status === "succeeded") {
      await store.webhookEndpoints.deliverySucceeded(endpoint, delivery._id, new Date(clock.now()));
    } else if (delivery.status === "failed") {
      logger.info({ deliveryId: delivery._id, endpointId: endpoint._id }, "webhook delivery failed");
      if (await store.webhookEndpoints.deliveryFailed(endpoint, delivery._id, new Date(clock.now()))) {
        logger.warn(
          { endpointId: endpoint._id },
          "webhook endpoint disabled after consecutive failed deliveries",
        );
        disabled.add(endpoint._id);
      }
    }
  }
  await store.webhookDeliveries.healthCounted(pending.map((delivery) => delivery._id));
  return disabled;
}

/** Deliveries counted per sweep at most. */
const SWEEP_BATCH = 100;

/**
 * Counts what workers that died between an outcome and its count left: deliveries settled longer
 * than `graceMs` ago (a live worker counts its own within moments) and still marked.
 */
export async function sweepHealth(counting: HealthCounting, graceMs: number): Promise<Set<string>> {
  const before = new Date(counting.clock.now() - graceMs);
  const left = await counting.store.webhookDeliveries.healthPendingSince(before, SWEEP_BATCH);
  if (left.length === 0) return new Set();
  counting.logger.info(
    { deliveries: left.length },
    "counting delivery outcomes a stopped worker left uncounted",
  );
  return countHealth(counting, left);
}
