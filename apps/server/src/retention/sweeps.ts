import type { Config } from "../config.js";
import type { Logger } from "../platform/logger.js";
import type { Store } from "../store.js";

/**
 * The retention sweeps, one per collection that grows with traffic (docs/operations.md
 * "Retention"): each removes what its setting no longer keeps, in batches
 * (platform/database/batch-delete.ts) so that the API goes on meanwhile.
 */

export interface RetentionSweep {
  /** The collection it removes from, as logs name it. */
  collection: string;
  /** Removes what is past retention at `now`; answers how many documents went. */
  sweep(now: Date): Promise<number>;
}

type RetentionConfig = Pick<
  Config,
  "deliveryRetentionMs" | "attemptRetentionMs" | "recoveryRetentionMs" | "tombstoneRetentionMs"
>;

/** Every collection's sweep, by the settings of `config` (events and idempotency keys: their store's own). */
export function retentionSweeps(store: Store, config: RetentionConfig): RetentionSweep[] {
  return [
    { collection: "events", sweep: (now) => store.events.sweep(now) },
    {
      collection: "webhook_deliveries",
      sweep: (now) => store.webhookDeliveries.sweep(config.deliveryRetentionMs, now),
    },
    {
      collection: "delivery_attempts",
      sweep: (now) => store.deliveryAttempts.sweep(config.attemptRetentionMs, now),
    },
    {
      collection: "webhook_recoveries",
      sweep: (now) => store.webhookRecoveries.sweep(config.recoveryRetentionMs, now),
    },
    { collection: "tombstones", sweep: (now) => store.tombstones.sweep(config.tombstoneRetentionMs, now) },
    { collection: "idempotency_keys", sweep: (now) => store.idempotencyKeys.sweep(now) },
    { collection: "console_sessions", sweep: (now) => store.consoleSessions.sweep(now) },
    { collection: "webhook_filtered", sweep: (now) => store.webhookFiltered.sweep(now) },
  ];
}

/**
 * Runs the sweeps one after another, so one at a time loads the database; one that fails is
 * logged and the others still run (it tries again next time). Once `stopped()` (the server is
 * stopping, its database closing) no other starts, and a failure is not logged. Answers what each
 * removed.
 */
export async function runRetentionSweeps(
  sweeps: readonly RetentionSweep[],
  logger: Logger,
  options: { now?: Date; stopped?: () => boolean } = {},
): Promise<Record<string, number>> {
  const { now = new Date(), stopped = () => false } = options;
  const removed: Record<string, number> = {};
  for (const { collection, sweep } of sweeps) {
    if (stopped()) break;
    try {
      removed[collection] = await sweep(now);
    } catch (err) {
      if (!stopped())
        logger.warn({ err, collection }, "retention sweep failed; retrying at the next interval");
    }
  }
  const total = Object.values(removed).reduce((sum, count) => sum + count, 0);
  if (total > 0) logger.info({ removed }, "removed records past retention");
  return removed;
}
