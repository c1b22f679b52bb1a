import type { StoredEvent } from "../../events/model.js";
import type { WebhookEndpointDoc } from "../endpoints/store.js";

import type { RecoveryStores } from "./store.js";

/**
 * Resend and recovery (docs/decisions.md, "Webhook deliveries, resend and recovery"): queue deliveries of stored events again, through the same
 * queue as the events' own deliveries (webhooks/deliveries/queue.ts), so they carry the same bytes and event
 * id and get the normal retries. A resend runs in the request; a recovery is recorded by the
 * request and run by a job on the workers (webhooks/recovery/job.ts, docs/decisions.md "Recoveries
 * run as jobs").
 */

/** Queues the event again to `endpoints`; those with a pending delivery of it keep that one. */
export function resend(store: RecoveryStores, event: StoredEvent, endpoints: WebhookEndpointDoc[]) {
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
