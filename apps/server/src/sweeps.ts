import type { Config } from "./config.js";
import type { Logger } from "./platform/logger.js";
import { retentionSweeps, runRetentionSweeps } from "./retention/sweeps.js";
import type { Store } from "./store.js";

/**
 * The periodic work of a server process (docs/design.md, Database: expiry by sweeps, no TTL indexes): the
 * relay's sweep for events a crashed writer left on their documents, the removal of full rate-limit
 * buckets, and the retention sweeps (retention/sweeps.ts). Every process may run them at once;
 * each is idempotent.
 */

const HOURLY = 3_600_000;

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
