import type { AnyBulkWriteOperation, Collection, Db } from "mongodb";
import type { EventType } from "../domain/events.js";
import type { Schema } from "../spec/types.js";
import { insertManyOnce } from "./insert-once.js";
import { newestFirst, type Page } from "./records.js";

/**
 * The `webhook_deliveries` collection (issue 22): one document per delivery, i.e. one event queued
 * to one endpoint with all its attempts, made when the event happens, by a resend and by a
 * recovery. It answers "which events reached which endpoint" (the deliveries lists) and "what did
 * this endpoint miss" (recovery: events without a `succeeded` delivery to it).
 *
 * At most one delivery of an event to an endpoint is `pending`: `pending_key` is set only while
 * it is, and a sparse unique index on it (no partial indexes or transactions on the embedded
 * fallback, DESIGN.md §2) makes that a database fact, however many resends and recoveries race.
 */

export type DeliveryStatus = Schema<"WebhookDeliveryStatus">;

/** What queued a delivery: the event happening, a resend, or a recovery. */
export type DeliveryOrigin = "event" | "resend" | "recover";

export interface WebhookDeliveryDoc {
  _id: string;
  workspace_id: string;
  event_id: string;
  event_type: EventType;
  endpoint_id: string;
  status: DeliveryStatus;
  /** Attempts started so far. */
  attempts: number;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
  origin: DeliveryOrigin;
  /** The recovery (`rcv_…`) that queued it. */
  recovery_id?: string;
  /** `<endpoint_id> <event_id>` while pending, removed when it settles (see the module comment). */
  pending_key?: string;
}

/** The outcome of an attempt, or of a delivery that stopped without one. */
export type DeliveryProgress =
  | { kind: "retry"; attempt: number; at: Date; statusCode: number | null; nextAttemptAt: Date }
  | {
      kind: "settled";
      status: Exclude<DeliveryStatus, "pending">;
      attempt?: number;
      at: Date;
      statusCode?: number | null;
    };

export const pendingKey = (endpointId: string, eventId: string): string => `${endpointId} ${eventId}`;

export function toWebhookDelivery(doc: WebhookDeliveryDoc): Schema<"WebhookDelivery"> {
  return {
    id: doc._id,
    object: "webhook_delivery",
    event_id: doc.event_id,
    event_type: doc.event_type,
    endpoint_id: doc.endpoint_id,
    status: doc.status,
    attempts: doc.attempts,
    last_attempt_at: doc.last_attempt_at?.toISOString() ?? null,
    last_status_code: doc.last_status_code,
    next_attempt_at: doc.next_attempt_at?.toISOString() ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** The per-endpoint list's filters, as plain values. */
export interface DeliveryFilters {
  status?: DeliveryStatus;
  eventType?: EventType;
}

export class WebhookDeliveries {
  readonly collection: Collection<WebhookDeliveryDoc>;

  constructor(db: Db) {
    this.collection = db.collection<WebhookDeliveryDoc>("webhook_deliveries");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex(
      { pending_key: 1 },
      { name: "one_pending", unique: true, sparse: true },
    );
    await this.collection.createIndex(
      { workspace_id: 1, endpoint_id: 1, _id: -1 },
      { name: "endpoint_newest" },
    );
    await this.collection.createIndex({ workspace_id: 1, event_id: 1, _id: -1 }, { name: "event_newest" });
    // Recovery asks which events have a pending or succeeded delivery to the endpoint since a time.
    await this.collection.createIndex(
      { endpoint_id: 1, status: 1, created_at: 1 },
      { name: "endpoint_status_created" },
    );
    await this.collection.createIndex({ created_at: 1 }, { name: "retention_sweep" });
  }

  /**
   * Records new deliveries in one round trip. A delivery whose `_id` exists (the relay ran again)
   * or whose event already has a pending delivery to the endpoint is not recorded. Returns, per
   * delivery, whether it was recorded.
   */
  async recordMany(docs: WebhookDeliveryDoc[]): Promise<boolean[]> {
    if (docs.length === 0) return [];
    const existed = await insertManyOnce(this.collection, docs);
    return existed.map((before) => !before);
  }

  /** Of `ids`, the deliveries still pending and never attempted (their jobs may be missing). */
  pendingUnattempted(ids: string[]): Promise<WebhookDeliveryDoc[]> {
    return this.collection.find({ _id: { $in: ids }, status: "pending", attempts: 0 }).toArray();
  }

  /** Deliveries by id (any workspace), for the first attempt of their jobs. */
  findMany(ids: string[]): Promise<WebhookDeliveryDoc[]> {
    return this.collection
      .find({ _id: { $in: ids } }, { projection: { _id: 1, status: 1, attempts: 1 } })
      .toArray();
  }

  /**
   * Writes the progress of many deliveries in one round trip. Each write applies only to a pending
   * delivery whose attempts are not past this one's (a worker that lost its job to another one
   * cannot move it back); settling removes `pending_key`, so the event may be queued again.
   */
  async progress(updates: Array<{ id: string; progress: DeliveryProgress }>): Promise<void> {
    if (updates.length === 0) return;
    const operations: AnyBulkWriteOperation<WebhookDeliveryDoc>[] = updates.map(({ id, progress }) => {
      const set: Partial<WebhookDeliveryDoc> = { updated_at: progress.at };
      if (progress.attempt !== undefined) {
        set.attempts = progress.attempt;
        set.last_attempt_at = progress.at;
        set.last_status_code = progress.statusCode ?? null;
      }
      const filter =
        progress.attempt === undefined
          ? { _id: id, status: "pending" as const }
          : { _id: id, status: "pending" as const, attempts: { $lte: progress.attempt } };
      if (progress.kind === "retry") {
        set.next_attempt_at = progress.nextAttemptAt;
        return { updateOne: { filter, update: { $set: set } } };
      }
      set.status = progress.status;
      set.next_attempt_at = null;
      return { updateOne: { filter, update: { $set: set, $unset: { pending_key: "" } } } };
    });
    await this.collection.bulkWrite(operations, { ordered: false });
  }

  /** An endpoint was disabled: its pending deliveries are dropped (their jobs are cancelled). */
  async dropPending(endpointId: string, now = new Date()): Promise<number> {
    const { modifiedCount } = await this.collection.updateMany(
      { endpoint_id: endpointId, status: "pending" },
      {
        $set: { status: "dropped", next_attempt_at: null, updated_at: now },
        $unset: { pending_key: "" },
      },
    );
    return modifiedCount;
  }

  /**
   * The events with a pending or succeeded delivery to the endpoint made since `since` (a delivery
   * of an event is made after the event): a recovery of a window starting then skips them. One
   * range read of the endpoint's deliveries for the whole window, rather than one `$in` per batch
   * of events, which the embedded fallback answers by scanning the collection each time.
   */
  async coveredSince(endpointId: string, since: Date): Promise<Set<string>> {
    const docs = await this.collection
      .find(
        { endpoint_id: endpointId, status: { $in: ["pending", "succeeded"] }, created_at: { $gte: since } },
        { projection: { _id: 0, event_id: 1 } },
      )
      .toArray();
    return new Set(docs.map((doc) => doc.event_id));
  }

  /** A page of an endpoint's deliveries, newest first, one more than asked for `has_more`. */
  listForEndpoint(
    endpoint: { _id: string; workspace_id: string },
    filters: DeliveryFilters,
    page: Page,
  ): Promise<WebhookDeliveryDoc[]> {
    const filter: Record<string, unknown> = { endpoint_id: endpoint._id };
    if (filters.status !== undefined) filter.status = filters.status;
    if (filters.eventType !== undefined) filter.event_type = filters.eventType;
    return newestFirst(this.collection, endpoint.workspace_id, filter, page);
  }

  /** A page of an event's deliveries, newest first. */
  listForEvent(event: { _id: string; workspace_id: string }, page: Page): Promise<WebhookDeliveryDoc[]> {
    return newestFirst(this.collection, event.workspace_id, { event_id: event._id }, page);
  }

  /** Removes settled deliveries older than the retention period of events; returns how many went. */
  async sweep(retentionMs: number, now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - retentionMs);
    const { deletedCount } = await this.collection.deleteMany({
      created_at: { $lt: cutoff },
      status: { $ne: "pending" },
    });
    return deletedCount;
  }
}
