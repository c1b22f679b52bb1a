import type { ChangeStream, Db } from "mongodb";
import { AGAIN, type BackoffPolicy, retry } from "../../platform/backoff.js";
import type { Logger } from "../../platform/logger.js";

/**
 * How a worker hears of deliveries another process queued (an API process relaying events), so
 * they go out in milliseconds (docs/decisions.md, "Waking workers"). Chosen once at start:
 *
 * - where the deployment has change streams (a replica set): a change stream on the inserts into
 *   `webhook_deliveries`, which asks the dispatcher for a round; while it is down (it failed and
 *   is not yet reopened), the quick poll below;
 * - where it has none (a standalone mongod refuses `$changeStream`, the embedded fallback has no
 *   oplog): a round every `WEBHOOK_WAKE_INTERVAL_MS`, one indexed read that finds nothing when
 *   nothing is due, five times as seldom after a quiet second.
 *
 * Either way a round also runs every `WEBHOOK_POLL_INTERVAL_MS` (the quick poll's rounds count,
 * when even relaxed it is the more frequent): it finds retries another process scheduled and
 * deliveries whose worker died (their lease ran out). Waking decides only how soon a delivery is
 * found, never whether.
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

/**
 * A change stream that failed is opened again after 250 ms, 500 ms … then every 10 s while the
 * database refuses it; the quick poll covers meanwhile, so the wait only costs aggregates.
 */
const REOPEN: BackoffPolicy = { firstMs: 250, factor: 2, maxMs: 10_000 };

export async function startWake(
  db: Db,
  dispatcher: Wakeable,
  options: { wakeIntervalMs: number; pollIntervalMs: number; logger: Logger },
): Promise<WakeSource> {
  const regular = setInterval(() => dispatcher.wake(), options.pollIntervalMs);
  regular.unref();
  const refused = await changeStreamsRefused(db);
  if (!refused) {
    const watching = keepWatching(db, dispatcher, options);
    return {
      description: "webhook wake: change stream on webhook_deliveries",
      stop: async () => {
        clearInterval(regular);
        await watching.stop();
      },
    };
  }
  // Where the quick poll, even relaxed, runs a round at least as often, the regular one would
  // only add reads to an idle worker's.
  if (options.wakeIntervalMs * RELAXED_FACTOR <= options.pollIntervalMs) clearInterval(regular);
  const busy = pollWhileBusy(dispatcher, options.wakeIntervalMs);
  // Said once, in words: how delivery wakes here. The server's own refusal only where it says
  // something (a mongod's code: a replica set was perhaps expected); the embedded fallback has no
  // change streams by design, and its bare "Unknown error" would read like a fault.
  const answer = refused.code ? `; the server answered code ${refused.code}: ${refused.message}` : "";
  return {
    description:
      `webhook wake: looking for due deliveries every ${options.wakeIntervalMs} ms ` +
      `(this database has no change streams${answer})`,
    stop: async () => {
      clearInterval(regular);
      clearInterval(busy);
    },
  };
}

/**
 * The change stream for the worker's life. The driver resumes a stream once by itself after a
 * resumable error; when that fails too (the database away for longer than a server selection, a
 * cursor it killed), the stream is gone: the quick poll of a deployment without change streams
 * takes over, and the stream is opened again with backoff (REOPEN); once it is, the poll stops.
 * One warning when it falls back and one line when it is back, whatever the retries in between.
 */
function keepWatching(
  db: Db,
  dispatcher: Wakeable,
  { wakeIntervalMs, logger }: { wakeIntervalMs: number; logger: Logger },
): { stop(): Promise<void> } {
  const stopping = new AbortController();
  let stream: ChangeStream | undefined;
  let poll: NodeJS.Timeout | undefined;
  let downSince: number | undefined;
  const fallBack = (err: unknown) => {
    if (downSince !== undefined) return;
    downSince = Date.now();
    poll = pollWhileBusy(dispatcher, wakeIntervalMs);
    logger.warn(
      { err, pollMs: wakeIntervalMs },
      "webhook wake change stream failed; looking for due deliveries every WEBHOOK_WAKE_INTERVAL_MS until it reopens",
    );
  };
  const open = async (): Promise<ChangeStream | typeof AGAIN> => {
    stream = watchInserts(db);
    const refusal = await refused(stream, dispatcher);
    if (!refusal) return stream;
    if (!stopping.signal.aborted) fallBack(refusal.error);
    return AGAIN;
  };
  void (async () => {
    for (;;) {
      const current = await retry(REOPEN, open, { signal: stopping.signal });
      if (!current || stopping.signal.aborted) return;
      if (downSince !== undefined) {
        clearInterval(poll);
        logger.info(
          { downMs: Date.now() - downSince },
          "webhook wake change stream reopened; quick poll stopped",
        );
        downSince = undefined;
        // What was queued between the poll's last round and the stream's start.
        dispatcher.wake();
      }
      const err = await follow(current, dispatcher);
      if (stopping.signal.aborted) return;
      fallBack(err);
    }
  })().catch((err: unknown) => {
    // Not expected (each step catches what the database throws); if it happens, poll for good.
    if (stopping.signal.aborted) return;
    clearInterval(poll);
    poll = pollWhileBusy(dispatcher, wakeIntervalMs);
    logger.error({ err }, "webhook wake change stream given up; looking for due deliveries instead");
  });
  return {
    // Not waiting for the loop: it may sleep out a REOPEN wait, after which it only sees the
    // abort. Closing the stream ends a `follow` or an opening under way.
    async stop() {
      stopping.abort();
      clearInterval(poll);
      await stream?.close().catch(() => {});
    },
  };
}

function watchInserts(db: Db): ChangeStream {
  return db
    .collection("webhook_deliveries")
    .watch([{ $match: { operationType: "insert" } }, { $project: { _id: 1 } }]);
}

/**
 * Asks a new stream once (the first ask runs the `aggregate` that opens it): undefined when it is
 * open, else why not (it is closed then).
 */
async function refused(stream: ChangeStream, dispatcher: Wakeable): Promise<{ error: unknown } | undefined> {
  let error: unknown = new Error("the server closed the change stream at once");
  try {
    if (await stream.tryNext()) dispatcher.wake();
    if (!stream.closed) return undefined;
  } catch (err) {
    error = err;
  }
  await stream.close().catch(() => {});
  return { error };
}

/** A round for every insert the stream reports, until it fails (or is closed at shutdown): why it ended. */
async function follow(stream: ChangeStream, dispatcher: Wakeable): Promise<unknown> {
  try {
    for (;;) {
      await stream.next();
      dispatcher.wake();
    }
  } catch (err) {
    await stream.close().catch(() => {});
    return err;
  }
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
 * null when that works, else how the server refused. A standalone mongod answers code 40573;
 * mongo-java-server without its oplog fails with a bare "Unknown error" and no code; a cursor
 * closed at once is no better.
 */
async function changeStreamsRefused(db: Db): Promise<{ code?: number; message: string } | null> {
  const stream = db.collection("webhook_deliveries").watch([], { maxAwaitTimeMS: 1 });
  try {
    await stream.tryNext();
    return stream.closed ? { message: "the change stream closed at once" } : null;
  } catch (err) {
    const { code, message } = err as { code?: number; message?: string };
    return { ...(code ? { code } : {}), message: message ?? String(err) };
  } finally {
    await stream.close().catch(() => {});
  }
}
