import { type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import type { Schema } from "../../spec/types.js";
import type { FilteredCounts } from "../endpoints/filtered.js";
import type { WebhookEndpoints } from "../endpoints/store.js";
import type { DeliveryStatus, WebhookDeliveries } from "./store.js";

/**
 * `getWebhookEndpointStats`: an endpoint's deliveries of the last 24 clock hours counted by
 * status, in total and per hour (what the webhook console charts). Whole hours, so the answer
 * changes only with the deliveries and once an hour, not with every call. A read of
 * `webhook_deliveries` by endpoint and time (its `endpoint_status_created` index,
 * store.ts), two small fields per delivery, counted here: a `$group` by hour would need date operators the embedded fallback lacks, and
 * 10,000 deliveries a day read this way take milliseconds.
 */

export const WINDOW_HOURS = 24;
const HOUR_MS = 3_600_000;
type Counts = Schema<"DeliveryCounts">;
export type EndpointStats = Schema<"WebhookEndpointStats">;

const zero = (): Counts => ({ succeeded: 0, failed: 0, pending: 0, dropped: 0 });

/** The window that holds `now`: 24 clock hours (UTC), the last one the hour `now` is in. */
export function windowOf(now: Date): { since: Date; until: Date } {
  const until = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
  return { since: new Date(until.getTime() - WINDOW_HOURS * HOUR_MS), until };
}

/** Pure: the deliveries of the window starting at `since`, counted in total and per hour. */
export function countByHour(
  deliveries: Iterable<{ status: DeliveryStatus; created_at: Date }>,
  since: Date,
): { totals: Counts; hourly: (Counts & { start: string })[] } {
  const buckets = Array.from({ length: WINDOW_HOURS }, zero);
  const totals = zero();
  for (const { status, created_at } of deliveries) {
    const bucket = buckets[Math.floor((created_at.getTime() - since.getTime()) / HOUR_MS)];
    if (!bucket) continue;
    bucket[status] += 1;
    totals[status] += 1;
  }
  const hourly = buckets.map((counts, index) => ({
    start: new Date(since.getTime() + index * HOUR_MS).toISOString(),
    ...counts,
  }));
  return { totals, hourly };
}

export async function endpointStats(
  stores: { webhookDeliveries: WebhookDeliveries; webhookFiltered: FilteredCounts },
  endpoint: { _id: string; workspace_id: string },
  now = new Date(),
): Promise<EndpointStats> {
  const { since, until } = windowOf(now);
  const [made, filtered] = await Promise.all([
    stores.webhookDeliveries.madeBetween(endpoint._id, since, until),
    stores.webhookFiltered.between(endpoint._id, since, until),
  ]);
  const counted = countByHour(made, since);
  const hourly = counted.hourly.map((hour) => ({
    ...hour,
    filtered: filtered.get(Date.parse(hour.start)) ?? 0,
  }));
  return {
    object: "webhook_endpoint_stats",
    endpoint_id: endpoint._id,
    since: since.toISOString(),
    until: until.toISOString(),
    totals: counted.totals,
    filtered: hourly.reduce((sum, hour) => sum + hour.filtered, 0),
    hourly,
  };
}

export function endpointStatsRoutes({
  op,
  store,
}: RouteKit<{
  webhookDeliveries: WebhookDeliveries;
  webhookEndpoints: WebhookEndpoints;
  webhookFiltered: FilteredCounts;
}>): void {
  op("getWebhookEndpointStats", async ({ ctx, id }) => {
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    return { status: 200, body: await endpointStats(store, endpoint) };
  });
}
