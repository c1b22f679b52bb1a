import { InMemoryNotificationChannel, type JobId, type JobNotification } from "agenda";
import { DELIVERY_JOB } from "../db/delivery-jobs.js";

/**
 * Agenda's in-process notification channel, made cheap for the writer (issue 11 item 7).
 *
 * Agenda's own InMemoryNotificationChannel runs the processor's handler inside `publish`, and
 * `job.save()` awaits it: the handler locks due jobs one findOneAndUpdate at a time until none is
 * left, so an API write that created a delivery job waited for the whole queue filling, and 100
 * writes a second started 100 overlapping fillings, each ending with one more (scanning) lock
 * query that finds nothing. Here `publish` returns at once and the notifications coalesce: one
 * filling runs at a time, and notifications that arrive while it runs start exactly one more
 * afterwards (a job inserted after the running filling's last lock query is still picked up).
 * Of the coalesced notifications the earliest due is passed on, so the processor's "due before
 * the next poll?" check sees the most urgent one.
 */
export class CoalescingNotificationChannel extends InMemoryNotificationChannel {
  private next: JobNotification | undefined;
  private draining = false;

  override async publish(notification: JobNotification): Promise<void> {
    if (this.state !== "connected") throw new Error("Cannot publish: channel not connected");
    this.next = earlier(this.next, notification);
    if (!this.draining) void this.drain();
  }

  /**
   * Makes the processor look for due delivery jobs now, as a delivery job created due now in this
   * process would: for jobs created elsewhere (a ring of the delivery bell, delivery/wake.ts) or
   * by the delivery queue here. A no-op while the channel is not connected (Agenda not started
   * yet, or stopped).
   */
  wake(): void {
    if (this.state !== "connected") return;
    void this.publish({
      // No one job: the processor fills its queue with every due job of the name.
      jobId: "" as JobId,
      jobName: DELIVERY_JOB,
      nextRunAt: new Date(),
      priority: 0,
      timestamp: new Date(),
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      // Let the writer's own code run on first: its response does not wait for the filling.
      await new Promise<void>((done) => setImmediate(done));
      while (this.next && this.state === "connected") {
        const notification = this.next;
        this.next = undefined;
        // notifyHandlers settles every handler and reports none of their errors to us.
        await this.notifyHandlers(notification);
      }
    } finally {
      this.draining = false;
    }
  }
}

/** Of two notifications, the one due first (no `nextRunAt` means now). */
function earlier(a: JobNotification | undefined, b: JobNotification): JobNotification {
  if (!a) return b;
  const due = (n: JobNotification) => n.nextRunAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  return due(b) < due(a) ? b : a;
}
