import type { ChangeStream } from "mongodb";
import { DELIVERY_BELL_COLLECTION, type DeliveryBell } from "../db/delivery-bell.js";
import type { Logger } from "../logger.js";

/**
 * How a worker hears the delivery bell (db/delivery-bell.ts, issue 25), so jobs an API process
 * created run in milliseconds instead of at Agenda's next poll (`WEBHOOK_POLL_INTERVAL_MS`, which
 * stays as the safety net for a lost ring). Two ways, chosen at start by opening a change stream:
 *
 * - a change stream on the bell, where the deployment has them (a replica set);
 * - reading the bell's counter every `WEBHOOK_WAKE_INTERVAL_MS` (relaxed while no rings come,
 *   see RELAXED_FACTOR) where it has none: a standalone
 *   mongod refuses `$changeStream` (code 40573), the embedded fallback (mongo-java-server without
 *   its oplog) fails it too, and a server that answers with a cursor it closed at once is no
 *   better. A read by `_id` is cheap on every deployment, the fallback included.
 *
 * A stream that worked and then failed (a non-resumable error: the driver resumes the others
 * itself) falls back to reading the counter and tries a stream again every STREAM_RETRY_MS.
 * Every path only wakes the processor: a wake too many costs one lock query that finds nothing.
 */

/** A getMore that answered empty sooner than this did not wait for data: pause as long before the next. */
const SPIN_GUARD_MS = 10;
/**
 * Reading the counter tightens while work arrives: every interval while rings came within the
 * last QUIET_AFTER_MS, and RELAXED_FACTOR times as seldom after, so an idle worker costs little
 * (at the default 20 ms: 50 reads a second cost an idle worker ~8 % of a core and the embedded
 * database ~5 %; relaxed, a fifth of that) and the first write after a quiet spell still reaches it
 * within a relaxed interval.
 */
const QUIET_AFTER_MS = 1_000;
const RELAXED_FACTOR = 5;
/** After a working stream failed, how often to try opening one again. */
const STREAM_RETRY_MS = 10_000;

export interface WakeOptions {
  bell: DeliveryBell;
  /** Called on every ring heard (the caller coalesces: delivery/notification-channel.ts `wake`). */
  onRing: () => void;
  /** WEBHOOK_WAKE_INTERVAL_MS: how often to read the counter without change streams. */
  intervalMs: number;
  logger: Logger;
  /** After a working stream failed, how often to try opening one again (default 10 s; tests shorten it). */
  streamRetryMs?: number;
}

export interface Wake {
  /** Stops listening: closes the stream or ends the reads; resolves once nothing is in flight. */
  stop(): Promise<void>;
}

/** Starts listening; resolves once the way is chosen (and logged). */
export async function listenToDeliveryBell(options: WakeOptions): Promise<Wake> {
  const listener = new BellListener(options);
  await listener.start();
  return listener;
}

type Opened = { stream: ChangeStream } | { stream?: undefined; reason: string };

class BellListener implements Wake {
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  private stream: ChangeStream | undefined;
  private interruptSleep: (() => void) | undefined;

  constructor(private readonly options: WakeOptions) {}

  async start(): Promise<void> {
    const { logger, intervalMs } = this.options;
    const opened = await this.open();
    if (opened.stream) {
      logger.info(`delivery wake: change stream on ${DELIVERY_BELL_COLLECTION}`);
    } else {
      logger.info(
        `delivery wake: polling ${DELIVERY_BELL_COLLECTION} every ${intervalMs} ms (no change streams: ${opened.reason})`,
      );
    }
    // Only a stream that worked is tried again: a deployment without change streams stays without.
    this.running = this.run(opened.stream, opened.stream !== undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.interruptSleep?.();
    await this.stream?.close().catch(() => {});
    await this.running;
  }

  private async run(stream: ChangeStream | undefined, retryStream: boolean): Promise<void> {
    let current = stream;
    while (!this.stopped) {
      if (current) {
        await this.follow(current);
        if (this.stopped) return;
        // A ring may have come while the stream failed.
        this.options.onRing();
      }
      current = await this.poll(retryStream);
      if (current) {
        this.options.logger.info(`delivery wake: change stream on ${DELIVERY_BELL_COLLECTION} again`);
        this.options.onRing();
      }
    }
  }

  /**
   * Opens a change stream and asks it once: the first ask runs the `aggregate` that opens it, so
   * a deployment without change streams answers it with an error or a closed cursor.
   */
  private async open(): Promise<Opened> {
    const stream = this.options.bell.watch();
    // Held from the start, so a `stop` meanwhile closes it.
    this.stream = stream;
    try {
      const change = await stream.tryNext();
      if (stream.closed) return this.failed(stream, "the server closed the change stream at once");
      if (change) this.options.onRing();
      return { stream };
    } catch (err) {
      return this.failed(stream, `$changeStream refused: ${describe(err)}`);
    }
  }

  private async failed(stream: ChangeStream, reason: string): Promise<Opened> {
    this.stream = undefined;
    await stream.close().catch(() => {});
    return { reason };
  }

  /** Wakes on every change until the stream fails or the listener stops. */
  private async follow(stream: ChangeStream): Promise<void> {
    while (!this.stopped) {
      const asked = Date.now();
      try {
        if (await stream.tryNext()) {
          this.options.onRing();
          continue;
        }
        // Closed by the server (an `invalidate`: the collection was dropped): it will say no more.
        if (stream.closed) throw new Error("the server closed the change stream");
      } catch (err) {
        if (this.stopped) return;
        this.options.logger.warn(
          { err },
          `delivery wake: the change stream failed; polling ${DELIVERY_BELL_COLLECTION} until one opens again`,
        );
        await this.failed(stream, describe(err));
        return;
      }
      // mongo-java-server's streams answer a getMore at once, empty (no awaitData): without this
      // pause the loop would spin. A real replica set waits up to maxAwaitTimeMS itself.
      if (Date.now() - asked < SPIN_GUARD_MS) await this.sleep(SPIN_GUARD_MS);
    }
  }

  /**
   * Reads the counter every interval, waking when it moved, until the listener stops or (with
   * `retryStream`) a change stream opens again, which it returns.
   */
  private async poll(retryStream: boolean): Promise<ChangeStream | undefined> {
    const { bell, intervalMs, logger, onRing } = this.options;
    let last: number | undefined;
    let failing = false;
    const retryMs = this.options.streamRetryMs ?? STREAM_RETRY_MS;
    let retryAt = Date.now() + retryMs;
    let heardAt = Date.now();
    while (!this.stopped) {
      try {
        const rings = await bell.rings();
        if (last !== undefined && rings !== last) {
          onRing();
          heardAt = Date.now();
        }
        last = rings;
        failing = false;
      } catch (err) {
        // Once per outage: a read every few milliseconds would flood the log.
        if (!failing) logger.warn({ err }, "delivery wake: could not read the delivery bell");
        failing = true;
      }
      if (retryStream && Date.now() >= retryAt) {
        retryAt = Date.now() + retryMs;
        const opened = await this.open();
        if (opened.stream) return opened.stream;
      }
      await this.sleep(Date.now() - heardAt < QUIET_AFTER_MS ? intervalMs : intervalMs * RELAXED_FACTOR);
    }
    return undefined;
  }

  /** A pause that `stop` cuts short (or skips: a read in flight when it came ends in one). */
  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        done();
      }
      this.interruptSleep = finish;
    });
  }
}

/** Why the server would not open a change stream, for the start line. */
function describe(err: unknown): string {
  const { message, code } = err as { message?: string; code?: unknown };
  return `${message ?? String(err)}${code !== undefined ? ` (code ${String(code)})` : ""}`;
}
