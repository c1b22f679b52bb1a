import { receives, type StoredEvent } from "../../events/model.js";
import { type Clock, systemClock } from "../../platform/clock.js";
import { childId, idTime, newId } from "../../platform/ids.js";
import type { Logger } from "../../platform/logger.js";
import { type EventFilter, passesFilter } from "../endpoints/filter.js";
import { type DeliveryOrigin, pendingKey, type WebhookDeliveries, type WebhookDeliveryDoc } from "./store.js";

/**
 * The one way a delivery is queued, whether the event just happened (`fanOut`, the relay's hook),
 * is resent, or is recovered: record the deliveries (one insert for the batch); that insert is the
 * schedule (docs/decisions.md, "One schedule: the delivery records"). Then whoever listens hears
 * of them (`onQueued`): the delivery worker of this process, if it runs one (a lane running here
 * takes them at once), and the metrics. Hearing only makes them go sooner: a process that dies
 * right after the insert, or has no worker yet, leaves nothing behind that a worker's next round
 * would not find; so queueing waits for no worker, and every role queues the same way.
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
  /** The events themselves, when they just happened (`fanOut`): listeners get them. */
  events?: readonly StoredEvent[];
}

/** A batch of deliveries just recorded. */
export interface Queued {
  origin: DeliveryOrigin;
  deliveries: WebhookDeliveryDoc[];
  /** The events fanned out (origin `event`), which a worker here may keep rather than read back. */
  events: readonly StoredEvent[];
}

/** Told of every batch recorded, at once and without being waited for: it must not throw. */
export type QueuedListener = (queued: Queued) => void;

/** Where an event goes: the enabled endpoints of its workspace (webhooks/endpoints/store.ts). */
export interface EndpointDirectory {
  enabledIn(
    workspaceIds: string[],
  ): Promise<{ _id: string; workspace_id: string; events: string[]; filter?: EventFilter | null }[]>;
}

/** Where the fan-out counts the events endpoints' filters kept from them (webhooks/endpoints/filtered.ts). */
export interface FilteredCounter {
  add(kept: readonly { endpointId: string; eventId: string }[], at: Date): Promise<void>;
}

/**
 * The delivery of an event as it happens: one id per (event, endpoint), so a relay that runs the
 * event's hooks again finds it recorded and queues nothing twice; and the event's id first, so an
 * endpoint's deliveries list in the order their events happened (docs/decisions.md, "Id layout").
 */
const eventDeliveryId = (request: DeliveryRequest) => childId("dlv", request.event._id, request.endpointId);

export class DeliveryQueue {
  private readonly listeners: QueuedListener[] = [];

  /**
   * Due times are on the delivery worker's clock (the database's, in a server): an API process
   * whose clock runs ahead must not queue its deliveries in the future.
   */
  private readonly clock: Clock;
  private readonly filtered: FilteredCounter | undefined;
  private readonly logger: Logger | undefined;

  constructor(
    private readonly deliveries: WebhookDeliveries,
    private readonly endpoints: EndpointDirectory,
    options: { clock?: Clock; filtered?: FilteredCounter; logger?: Logger } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.filtered = options.filtered;
    this.logger = options.logger;
  }

  /** Adds a listener told of every batch of deliveries recorded. */
  onQueued(listener: QueuedListener): void {
    this.listeners.push(listener);
  }

  /**
   * The relay's hook (events/outbox-relay.ts): one delivery of each event to every enabled
   * endpoint of its workspace subscribed to its type and passed by its content filter; one read
   * of the endpoints for the whole batch, filters matched here (webhooks/endpoints/filter.ts).
   * Idempotent: an event's delivery to an endpoint has one id, recorded once.
   */
  async fanOut(events: StoredEvent[]): Promise<WebhookDeliveryDoc[]> {
    const endpoints = await this.endpoints.enabledIn([...new Set(events.map((e) => e.workspace_id))]);
    const requests: DeliveryRequest[] = [];
    const filteredOut: { endpointId: string; eventId: string }[] = [];
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (endpoint.workspace_id !== event.workspace_id || !receives(endpoint, event)) continue;
        if (passesFilter(endpoint, event)) requests.push({ event, endpointId: endpoint._id });
        else filteredOut.push({ endpointId: endpoint._id, eventId: event._id });
      }
    }
    this.countFiltered(filteredOut);
    // Due at their event's time (its id's milliseconds): an event relayed late (a sweep racing
    // the writer's relay, or after a crash) still goes before the later events of its endpoint
    // that are waiting, rather than behind them. Never later than now on the database's clock:
    // a process whose clock runs ahead stamps ids in the future.
    const now = this.clock.now();
    return this.queue(requests, {
      origin: "event",
      dueAt: ({ event }) => new Date(Math.min(idTime(event._id), now)),
      events,
    });
  }

  /** Counted, not awaited, and a failure only logged: the count is for the stats, the deliveries matter. */
  private countFiltered(kept: { endpointId: string; eventId: string }[]): void {
    if (!this.filtered || kept.length === 0) return;
    this.filtered.add(kept, new Date(this.clock.now())).catch((err: unknown) => {
      this.logger?.warn({ err }, "could not count the events content filters kept from endpoints");
    });
  }

  /**
   * Queues one delivery per request; returns the deliveries recorded. A request whose event has a
   * pending delivery to the endpoint already is skipped, and so is an event's own delivery
   * recorded by an earlier relay.
   */
  async queue(requests: DeliveryRequest[], options: QueueOptions): Promise<WebhookDeliveryDoc[]> {
    if (requests.length === 0) return [];
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
    const batch: Queued = { origin: options.origin, deliveries: queued, events: options.events ?? [] };
    for (const listener of this.listeners) listener(batch);
    return queued;
  }
}
