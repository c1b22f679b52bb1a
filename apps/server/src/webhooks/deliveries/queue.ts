import type { StoredEvent } from "../../events/model.js";
import { type Clock, systemClock } from "../../platform/clock.js";
import { derivedId, newId } from "../../platform/ids.js";
import { type DeliveryOrigin, pendingKey, type WebhookDeliveries, type WebhookDeliveryDoc } from "./store.js";

/**
 * The one way a delivery is queued, whether the event just happened, is resent, or is recovered:
 * record the deliveries (one insert for the batch); that insert is the schedule (docs/decisions.md,
 * "One schedule: the delivery records"). Then the delivery worker of this process hears of them
 * (webhooks/delivery/worker.ts: a lane running here takes them at once), which only makes them go
 * sooner: a process that dies right after the insert leaves nothing behind that a worker's next
 * round would not find. It stands beside the records it writes and is handed the worker's ear
 * (`attachLanes`), so the store builds it without reaching up into the delivery worker.
 */

/** One delivery to queue: an event to an endpoint. */
export interface DeliveryRequest {
  event: Pick<StoredEvent, "_id" | "workspace_id" | "type" | "created_at">;
  endpointId: string;
}

export interface QueueOptions {
  origin: DeliveryOrigin;
  recoveryId?: string;
  /**
   * When each delivery is due. Default: now. A recovery makes them due at their event's time, in
   * the past, so the endpoint's lane sends them oldest event first.
   */
  dueAt?: (request: DeliveryRequest) => Date;
}

/** Told of the endpoints that have new deliveries, each with the earliest one's due time. */
export type LaneScheduler = (due: Map<string, Date>) => Promise<void>;

/** Told of every batch of deliveries recorded (metrics). */
export type QueuedListener = (queued: { origin: DeliveryOrigin; deliveries: WebhookDeliveryDoc[] }) => void;

/**
 * The delivery of an event as it happens: one id per (event, endpoint), so a relay that runs the
 * event's hooks again finds it recorded and queues nothing twice.
 */
const eventDeliveryId = (request: DeliveryRequest) =>
  derivedId("dlv", request.event.created_at.getTime(), `${request.event._id} ${request.endpointId}`);

export class DeliveryQueue {
  private readonly listeners: QueuedListener[] = [];
  private scheduleLanes: LaneScheduler | undefined;
  private clock: Clock = systemClock;
  private readonly lanesAttached: Promise<void>;
  private attached: () => void = () => {};

  constructor(private readonly deliveries: WebhookDeliveries) {
    this.lanesAttached = new Promise((done) => {
      this.attached = done;
    });
  }

  /**
   * Gives the queue the delivery worker's ear once it is built (main.ts builds it after the
   * database answers); queueing before then waits for it.
   */
  attachLanes(schedule: LaneScheduler, clock: Clock): void {
    this.scheduleLanes = schedule;
    this.clock = clock;
    this.attached();
  }

  /** Adds a listener told of every batch of deliveries recorded. */
  onQueued(listener: QueuedListener): void {
    this.listeners.push(listener);
  }

  /**
   * Queues one delivery per request; returns the deliveries recorded. A request whose event has a
   * pending delivery to the endpoint already is skipped, and so is an event's own delivery
   * recorded by an earlier relay.
   */
  async queue(requests: DeliveryRequest[], options: QueueOptions): Promise<WebhookDeliveryDoc[]> {
    if (requests.length === 0) return [];
    // Due now on the delivery worker's clock (the database's): an API process whose clock runs
    // ahead must not queue its deliveries in the future.
    await this.lanesAttached;
    const now = new Date(this.clock.now());
    const docs = requests.map((request): WebhookDeliveryDoc => {
      const due = options.dueAt?.(request) ?? now;
      return {
        _id: options.origin === "event" ? eventDeliveryId(request) : newId("dlv", now.getTime()),
        workspace_id: request.event.workspace_id,
        event_id: request.event._id,
        event_type: request.event.type,
        endpoint_id: request.endpointId,
        status: "pending",
        attempts: 0,
        last_attempt_at: null,
        last_status_code: null,
        next_attempt_at: due,
        created_at: now,
        updated_at: now,
        origin: options.origin,
        ...(options.recoveryId ? { recovery_id: options.recoveryId } : {}),
        pending_key: pendingKey(request.endpointId, request.event._id),
        due_at: due,
        lease_holder: null,
      };
    });
    const inserted = await this.deliveries.insertOnce(docs);
    const queued = docs.filter((_, i) => inserted[i]);
    if (queued.length === 0) return queued;
    const lanes = new Map<string, Date>();
    for (const doc of queued) {
      const earliest = lanes.get(doc.endpoint_id);
      if (!earliest || (doc.due_at as Date) < earliest) lanes.set(doc.endpoint_id, doc.due_at as Date);
    }
    await this.scheduleLanes?.(lanes);
    for (const listener of this.listeners) listener({ origin: options.origin, deliveries: queued });
    return queued;
  }
}
