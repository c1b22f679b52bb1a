import type { ChangeStream, Db } from "mongodb";
import type { Logger } from "../../platform/logger.js";

/**
 * How a worker hears of deliveries another process queued (an API process relaying events), so
 * they go out in milliseconds (docs/decisions.md, "Waking workers"). Chosen once at start:
 *
 * - where the deployment has change streams (a replica set): a change stream on the inserts into
 *   `webhook_deliveries`, which asks the dispatcher for a round;
 * - where it has none (a standalone mongod refuses `$changeStream`, the embedded fallback has no
 *   oplog): a round every `WEBHOOK_WAKE_INTERVAL_MS`, one indexed read that finds nothing when
 *   nothing is due, five times as seldom after a quiet second.
 *
 * Either way a round also runs every `WEBHOOK_POLL_INTERVAL_MS`: it finds retries another process
 * scheduled and deliveries whose worker died (their lease ran out). Waking decides only how soon
 * a delivery is found, never whether.
 */

/** What a wake source asks for rounds from. */
export interface Wakeable {
  wake(): void;
  /** Whether the last round found work (the poll relaxes while none does). */
  readonly foundWork: boolean;
}

export interface WakeSource {
  /** One line saying which source and why. */
  description: string;
  stop(): Promise<void>;
}

/** Polling relaxes to this many intervals after QUIET_AFTER_MS without work. */
const RELAXED_FACTOR = 5;
const QUIET_AFTER_MS = 1_000;

export async function startWake(
  db: Db,
  dispatcher: Wakeable,
  options: { wakeIntervalMs: number; pollIntervalMs: number; logger: Logger },
): Promise<WakeSource> {
  const timers = [setInterval(() => dispatcher.wake(), options.pollIntervalMs)];
  const stopTimers = () => {
    for (const timer of timers) clearInterval(timer);
  };
  for (const timer of timers) timer.unref();
  const refused = await changeStreamsRefused(db);
  if (!refused) {
    const stream = watchInserts(db, dispatcher, options.logger);
    return {
      description: "webhook wake: change stream on webhook_deliveries",
      stop: async () => {
        stopTimers();
        await stream.close().catch(() => {});
      },
    };
  }
  timers.push(pollWhileBusy(dispatcher, options.wakeIntervalMs));
  return {
    description: `webhook wake: looking for due deliveries every ${options.wakeIntervalMs} ms (no change streams: ${refused})`,
    stop: async () => stopTimers(),
  };
}

function watchInserts(db: Db, dispatcher: Wakeable, logger: Logger): ChangeStream {
  const stream = db
    .collection("webhook_deliveries")
    .watch([{ $match: { operationType: "insert" } }, { $project: { _id: 1 } }]);
  stream.on("change", () => dispatcher.wake());
  stream.on("error", (err) => {
    // A change that arrives while the stream closes at shutdown is an error to the driver, and
    // no news to us; otherwise the poll still finds every delivery, only later.
    if (!stream.closed) logger.warn({ err }, "webhook wake change stream failed; relying on the poll");
  });
  return stream;
}

/** A round every interval while rounds find work, every RELAXED_FACTOR intervals after a quiet second. */
function pollWhileBusy(dispatcher: Wakeable, intervalMs: number): NodeJS.Timeout {
  let lastBusy = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    if (dispatcher.foundWork) lastBusy = Date.now();
    const quiet = Date.now() - lastBusy > QUIET_AFTER_MS;
    if (quiet && ticks % RELAXED_FACTOR !== 0) return;
    dispatcher.wake();
  }, intervalMs);
  timer.unref();
  return timer;
}

/**
 * Opens a change stream and asks it once (the first ask runs the `aggregate` that opens it):
 * null when that works, else why not. A standalone mongod answers code 40573; mongo-java-server
 * without its oplog fails with a bare "Unknown error"; a cursor closed at once is no better.
 */
async function changeStreamsRefused(db: Db): Promise<string | null> {
  const stream = db.collection("webhook_deliveries").watch([], { maxAwaitTimeMS: 1 });
  try {
    await stream.tryNext();
    return stream.closed ? "the server closed the change stream at once" : null;
  } catch (err) {
    const { code, message } = err as { code?: number; message?: string };
    return `the server refused $changeStream${code ? ` (code ${code})` : ""}: ${message ?? String(err)}`;
  } finally {
    await stream.close().catch(() => {});
  }
}
