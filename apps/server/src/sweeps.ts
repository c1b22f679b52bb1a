import type { Config } from "./config.js";
import type { Logger } from "./platform/logger.js";
import type { Store } from "./store.js";

/**
 * The periodic work of a server process (docs/design.md, Database: expiry by sweeps, no TTL indexes): the
 * relay's sweep for events a crashed writer left on their documents, the removal of full rate-limit
 * buckets, and the retention sweeps, one per collection that grows with traffic
 * (docs/operations.md "Retention"): each removes what its setting no longer keeps, in batches
 * (platform/database/batch-delete.ts) so that the API goes on meanwhile. Every process may run
 * them at once; each is idempotent.
 */

const HOURLY = 3_600_000;

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

/** Runs `work` every `intervalMs`, never two at once; the first run starts now. */
function every(intervalMs: number, work: () => Promise<unknown>, what: string, logger: Logger): () => void {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    work()
      .catch((err) => logger.warn({ err }, `${what} failed; retrying at the next interval`))
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(run, intervalMs).unref();
  run();
  return () => clearInterval(timer);
}

/**
 * Starts the sweeps once the database is ready; returns a function that stops them. `startedAt`
 * (epoch milliseconds) is when the server started, before it took any write.
 */
export function startSweeps(store: Store, config: Config, logger: Logger, startedAt: number): () => void {
  // The first relay sweep takes every leftover from before this server started (a restart after
  // a crash finds its own), but not the events this server writes meanwhile: their writers are
  // relaying them right now. The API may take writes before the sweeps start (they wait for
  // delivery to be ready), so "started" is the server's start (server.ts), not this call's: in a
  // test's process, several servers start long after the process did. Later sweeps likewise leave
  // the last interval's events alone.
  let first = true;
  const retention = retentionSweeps(store, config);
  let stopped = false;
  const stops = [
    every(
      config.eventRelayIntervalMs,
      async () => {
        const grace = first ? Date.now() - startedAt : config.eventRelayIntervalMs;
        first = false;
        const moved = await store.relay.sweep(grace);
        if (moved > 0) logger.info({ moved }, "relayed events left by an interrupted writer");
      },
      "event relay sweep",
      logger,
    ),
    // A full bucket is the same as none.
    every(HOURLY, () => store.rateLimits.sweep(), "rate limit sweep", logger),
    every(
      HOURLY,
      () => runRetentionSweeps(retention, logger, { stopped: () => stopped }),
      "retention sweeps",
      logger,
    ),
  ];
  return () => {
    stopped = true;
    for (const stop of stops) stop();
  };
}
