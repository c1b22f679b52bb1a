import type { Schema } from "../../spec/types.js";

/**
 * `recent_deliveries` of each endpoint in `listWebhookEndpoints`: how its newest deliveries went,
 * so the console shows every row's health from the one list request. Computed when asked, not
 * kept: per page, one indexed read per endpoint (in parallel) of at most RECENT deliveries, two
 * small fields each — at most 100 × 100 documents for the largest page, whatever the traffic.
 * Counters kept on the endpoint would cost a write per settled delivery on the delivery path;
 * this costs only the list. The read is the store's (`WebhookDeliveries.recentOf`, store.ts).
 */

export const RECENT = 100;
export type RecentDeliveries = Schema<"WebhookEndpointRecentDeliveries">;

/** Pure: the summary of an endpoint's newest deliveries. */
export function summarise(
  deliveries: Iterable<{ status: Schema<"WebhookDeliveryStatus">; last_attempt_at: Date | null }>,
): RecentDeliveries {
  let counted = 0;
  let succeeded = 0;
  let failed = 0;
  let last: Date | null = null;
  for (const { status, last_attempt_at } of deliveries) {
    counted += 1;
    if (status === "succeeded") succeeded += 1;
    if (status === "failed") failed += 1;
    // A retried older delivery may have the latest attempt: the maximum, not the newest's.
    if (last_attempt_at && (!last || last_attempt_at > last)) last = last_attempt_at;
  }
  const settled = succeeded + failed;
  return {
    counted,
    succeeded,
    failed,
    success_rate: settled === 0 ? null : succeeded / settled,
    last_attempt_at: last?.toISOString() ?? null,
  };
}
