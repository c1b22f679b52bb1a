import { type Db, ObjectId } from "mongodb";
import { insertDeliveryJobs, type NewDeliveryJob } from "../db/delivery-jobs.js";
import type { QueueIntents } from "../db/queue-intents.js";
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
 * recovered: record the deliveries, then insert their Agenda jobs, one round trip each for the
 * whole batch.
 *
 * Deliveries come first because they are what a crash must not lose. A process that dies after
 * recording them and before their jobs exist leaves deliveries without jobs; who makes the jobs
 * then depends on the origin. An event's own deliveries: the relay, which runs the event's hooks
 * again until they finished (db/outbox.ts), with `again` set. A resend's or a recovery's: each
 * batch first writes a queue intent (db/queue-intents.ts) naming its deliveries, removed once the
 * jobs exist, and `sweepIntents` (every process, see sweeps.ts) makes the jobs of intents a dead
 * process left. Either order of "sweep" and "late job insert" is harmless: a job's `_id` is
 * derived from its delivery, so only one job per delivery exists at a time, and a job whose
 * delivery has settled sends nothing (delivery/deliver.ts).
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
    private readonly intents: QueueIntents,
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
      }),
    );
    // The relay repeats an event's hooks itself; resends and recoveries leave an intent.
    const intent =
      options.origin === "event"
        ? undefined
        : { _id: new ObjectId().toHexString(), delivery_ids: docs.map((doc) => doc._id), created_at: now };
    if (intent) await this.intents.record(intent);
    const recorded = await this.deliveries.recordMany(docs);
    const jobs: NewDeliveryJob[] = [];
    requests.forEach((request, i) => {
      const doc = docs[i] as WebhookDeliveryDoc;
      // An event's own delivery found recorded by an earlier relay: its job may be missing. (If it
      // has settled, the job finds that and sends nothing.)
      if (recorded[i] || (options.origin === "event" && options.again)) {
        jobs.push({ data: jobData(request, doc._id), nextRunAt: options.dueAt?.(request) ?? now });
      }
    });
    const queued = docs.filter((_, i) => recorded[i]);
    await this.insertJobs(jobs, { origin: options.origin, deliveries: queued });
    if (intent) await this.intents.done(intent._id);
    return queued;
  }

  /**
   * Makes the missing jobs of the intents left for more than `graceMs` (their process died, or is
   * very slow: then the jobs exist already and inserting them again is a no-op); returns how many
   * intents it finished.
   */
  async sweepIntents(graceMs: number, batch = 100): Promise<number> {
    const intents = await this.intents.stale(new Date(Date.now() - graceMs), batch);
    for (const intent of intents) {
      const docs = await this.deliveries.pendingUnattempted(intent.delivery_ids);
      const jobs = docs.map((doc) => ({
        // Without the event's bytes: the attempt reads the event (delivery/deliver.ts `eventOf`).
        data: {
          delivery_id: doc._id,
          event_id: doc.event_id,
          endpoint_id: doc.endpoint_id,
          workspace_id: doc.workspace_id,
          attempt: 0,
        },
        nextRunAt: new Date(),
      }));
      await this.insertJobs(jobs, { origin: docs[0]?.origin ?? "recover", deliveries: [] });
      await this.intents.done(intent._id);
    }
    return intents.length;
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
