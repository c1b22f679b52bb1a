import { MongoChangeStreamNotificationChannel } from "@agendajs/mongo-backend";
import { BaseNotificationChannel, type JobNotification, type NotificationChannel, toJobId } from "agenda";
import type { Db } from "mongodb";

/**
 * How a worker hears of lanes scheduled by another process (an API process queueing deliveries),
 * through Agenda's own seam, its NotificationChannel, so a delivery an API process queues runs in
 * milliseconds rather than at Agenda's next poll (`WEBHOOK_POLL_INTERVAL_MS`, which stays as the
 * safety net). Chosen once at start (docs/decisions.md, "Waking workers"):
 *
 * - where the deployment has change streams (a replica set): the change-stream channel that
 *   `@agendajs/mongo-backend` ships, watching Agenda's jobs collection;
 * - where it has none (a standalone mongod refuses `$changeStream`, the embedded fallback has no
 *   oplog): PollingNotificationChannel below, which asks Agenda's processor to look for due lanes
 *   every `WEBHOOK_WAKE_INTERVAL_MS`: one lock query on a collection holding one job per endpoint.
 */

/** Polling relaxes to this many intervals after QUIET_AFTER_MS without a lane starting. */
const RELAXED_FACTOR = 5;
const QUIET_AFTER_MS = 1_000;

/**
 * A channel for deployments without change streams. Notifications published in this process
 * (a lane scheduled or rescheduled here) reach its processor at once; for those of other
 * processes it tells the processor every interval to fill its queue of `jobName` jobs, which
 * costs one lock query that finds nothing when nothing is due. The interval relaxes after a
 * quiet second (`active()` tightens it again), so an idle worker costs little.
 */
export class PollingNotificationChannel extends BaseNotificationChannel {
  private timer: NodeJS.Timeout | undefined;
  private lastActive = 0;
  private ticks = 0;

  constructor(
    private readonly jobName: string,
    private readonly intervalMs: number,
  ) {
    super({ channelName: "deskline-poll" });
  }

  async connect(): Promise<void> {
    this.setState("connected");
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async disconnect(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.setState("disconnected");
  }

  async publish(notification: JobNotification): Promise<void> {
    await this.notifyHandlers(notification);
  }

  /** Work is flowing: poll at the full rate for the next quiet period. */
  active(): void {
    this.lastActive = Date.now();
  }

  private tick(): void {
    this.ticks++;
    const quiet = Date.now() - this.lastActive > QUIET_AFTER_MS;
    if (quiet && this.ticks % RELAXED_FACTOR !== 0) return;
    void this.notifyHandlers({
      jobId: toJobId("poll"),
      jobName: this.jobName,
      nextRunAt: new Date(),
      priority: 0,
      timestamp: new Date(),
      source: "poll",
    }).catch((err) => this.emit("error", err));
  }
}

/** The channel for this deployment, and a line saying which and why. */
export async function chooseWakeChannel(
  db: Db,
  options: { jobsCollection: string; jobName: string; intervalMs: number },
): Promise<{ channel: NotificationChannel; poll?: PollingNotificationChannel; description: string }> {
  const refused = await changeStreamsRefused(db);
  if (!refused) {
    return {
      channel: new MongoChangeStreamNotificationChannel({ db, collection: options.jobsCollection }),
      description: `webhook wake: change stream on ${options.jobsCollection}`,
    };
  }
  const poll = new PollingNotificationChannel(options.jobName, options.intervalMs);
  return {
    channel: poll,
    poll,
    description: `webhook wake: polling for due lanes every ${options.intervalMs} ms (no change streams: ${refused})`,
  };
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
