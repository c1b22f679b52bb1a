import type { DatabaseConnection } from "./platform/database/client.js";
import { type GaugeSources, Metrics } from "./platform/metrics/metrics.js";
import type { Store } from "./store.js";

/**
 * Connects the metrics to what they count: the relay reports each event it records, and the
 * scrape-time gauges read the database every process shares, so each process reports the same
 * deployment-wide figure (aggregate those with `max`, not `sum`, in PromQL).
 */

export interface MetricsWiring {
  store: Store;
  database: Pick<DatabaseConnection, "ping">;
  /** Counts deliveries waiting to be sent (tests may pass their own). */
  pendingDeliveries?: () => Promise<number>;
  /** Node's process metrics; off in tests that start many apps in one process. */
  processMetrics?: boolean;
}

/** The metrics of one server process, wired to its store and database. */
export function createMetrics({
  store,
  database,
  pendingDeliveries,
  processMetrics,
}: MetricsWiring): Metrics {
  const metrics = new Metrics({ processMetrics });
  // Counted once per event, not per relay of it.
  store.relay.onRecorded((events) => {
    for (const event of events) metrics.eventRecorded(event.type);
  });
  store.deliveryQueue.onQueued(({ origin, deliveries }) =>
    metrics.deliveriesQueued(origin, deliveries.length),
  );
  metrics.watch(databaseGaugeSources(store, database, pendingDeliveries));
  return metrics;
}

export function databaseGaugeSources(
  store: Store,
  database: Pick<DatabaseConnection, "ping">,
  pendingDeliveries?: () => Promise<number>,
): GaugeSources {
  return {
    databaseUp: () => database.ping(),
    disabledEndpoints: () => store.webhookEndpoints.countDisabled(),
    // Deliveries are the queue: those pending wait for a first attempt or a retry.
    pendingDeliveries: pendingDeliveries ?? (() => store.webhookDeliveries.countPending()),
  };
}
