import type { Db } from "mongodb";
import { insertDeliveryJobs, type NewDeliveryJob } from "../db/delivery-jobs.js";
import {
  type DeliveryOrigin,
  pendingKey,
  type WebhookDeliveries,
  type WebhookDeliveryDoc,
} from "../db/webhook-deliveries.js";
import type { StoredEvent } from "../domain/events.js";
import { derivedId, newId } from "../domain/ids.js";

/**
 * The one way a delivery is queued (issue 22), whether the event just happened, is resent, or is
 * recovered: record the deliveries, then insert their Agenda jobs, then clear their `unqueued`
 * mark, each step one round trip for the whole batch.
 *
 * Deliveries come first because they are what a crash must not lose: a process that dies after
 * recording them and before their jobs exist leaves them `unqueued`, and `sweepUnqueued` (run by
 * every process, see sweeps.ts) makes the missing jobs. Either order of "sweep" and "late job
 * insert" is harmless: a job's `_id` is derived from its delivery, so only one job per delivery
 * can exist at a time, and a job whose delivery has settled sends nothing (delivery/deliver.ts).
 */

/** One delivery to queue: an event to an endpoint. */
export interface DeliveryRequest {
  event: Pick<StoredEvent, "_id" | "workspace_id" | "type" | "payload" | "created_at">;
  endpointId: string;
}

export interface QueueOptions {
  origin: DeliveryOrigin;
  recoveryId?: string;
  /**
   * The relay ran again for this event (`origin: "event"`): its deliveries may be recorded while
   * the first run died before inserting their jobs, so those found recorded get their jobs again.
   */
  again?: boolean;
  /**
   * When each job is due. Default: now. A recovery makes them due at their event's time, in the
   * past, so a worker runs them oldest event first (Agenda locks the earliest `nextRunAt` first).
   */
  dueAt?: (request: DeliveryRequest) => Date;
}

/** Told after jobs were inserted (a worker in this process runs them at once), with the deliveries recorded. */
export type QueuedListener = (queued: { origin: DeliveryOrigin; deliveries: WebhookDeliveryDoc[] }) => void;

/** The delivery of an event as it happens: one id per (event, endpoint), so a relay that runs again finds it. */
const eventDeliveryId = (request: DeliveryRequest) =>
  derivedId("dlv", request.event.created_at.getTime(), `${request.event._id} ${request.endpointId}`);

export class DeliveryQueue {
  private readonly listeners: QueuedListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  /** Adds a listener told of every batch of jobs inserted (the worker's notification, metrics). */
  onQueued(listener: QueuedListener): void {
    this.listeners.push(listener);
  }

  /**
   * Queues one delivery per request; returns the deliveries recorded. A request whose event has a
   * pending delivery to the endpoint already is skipped, and so is an event's own delivery recorded
   * by an earlier relay (see `again`).
   */
  async queue(requests: DeliveryRequest[], options: QueueOptions): Promise<WebhookDeliveryDoc[]> {
    if (requests.length === 0) return [];
    const now = new Date();
    const docs = requests.map(
      (request): WebhookDeliveryDoc => ({
        _id: options.origin === "event" ? eventDeliveryId(request) : newId("dlv", now.getTime()),
        workspace_id: request.event.workspace_id,
        event_id: request.event._id,
        event_type: request.event.type,
        endpoint_id: request.endpointId,
        status: "pending",
        attempts: 0,
        last_attempt_at: null,
        last_status_code: null,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
        origin: options.origin,
        ...(options.recoveryId ? { recovery_id: options.recoveryId } : {}),
        pending_key: pendingKey(request.endpointId, request.event._id),
        unqueued: true,
      }),
    );
    const recorded = await this.deliveries.recordMany(docs);
    const queued = docs.filter((_, i) => recorded[i]);
    const jobs: NewDeliveryJob[] = [];
    requests.forEach((request, i) => {
      const doc = docs[i] as WebhookDeliveryDoc;
      // An event's own delivery found recorded by an earlier relay: its job may be missing. (If it
      // has settled, the job finds that and sends nothing.)
      if (recorded[i] || (options.origin === "event" && options.again)) {
        jobs.push({ data: jobData(request, doc._id), nextRunAt: options.dueAt?.(request) ?? now });
      }
    });
    await this.insertJobs(jobs, { origin: options.origin, deliveries: queued });
    await this.deliveries.markQueued(queued.map((doc) => doc._id));
    return queued;
  }

  /**
   * Makes the jobs of deliveries recorded more than `graceMs` ago whose jobs may be missing (a
   * process died between the two writes), a batch at a time; returns how many it looked at.
   */
  async sweepUnqueued(graceMs: number, batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const docs = await this.deliveries.unqueued(new Date(Date.now() - graceMs), batch);
      if (docs.length === 0) return total;
      const jobs = docs.map((doc) => ({
        data: {
          delivery_id: doc._id,
          event_id: doc.event_id,
          endpoint_id: doc.endpoint_id,
          workspace_id: doc.workspace_id,
          attempt: 0,
        },
        nextRunAt: new Date(),
      }));
      await this.insertJobs(jobs, { origin: "event", deliveries: [] });
      await this.deliveries.markQueued(docs.map((doc) => doc._id));
      total += docs.length;
      if (docs.length < batch) return total;
    }
  }

  private async insertJobs(jobs: NewDeliveryJob[], queued: Parameters<QueuedListener>[0]): Promise<void> {
    if (jobs.length === 0) return;
    await insertDeliveryJobs(this.db, jobs);
    for (const listener of this.listeners) listener(queued);
  }
}

/** The job of a delivery: the event's type and bytes travel with it, so attempts read no event. */
function jobData(request: DeliveryRequest, deliveryId: string): NewDeliveryJob["data"] {
  return {
    delivery_id: deliveryId,
    event_id: request.event._id,
    endpoint_id: request.endpointId,
    workspace_id: request.event.workspace_id,
    attempt: 0,
    event_type: request.event.type,
    payload: request.event.payload,
  };
}
