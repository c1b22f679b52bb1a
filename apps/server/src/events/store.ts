import type { Collection, Db } from "mongodb";
import { insertManyOnce } from "../platform/database/insert-once.js";
import { newestFirst, type Page } from "../platform/database/lists.js";
import { notFound } from "../platform/errors.js";
import type { Schema } from "../spec/types.js";
import type { EventType, StoredEvent } from "./model.js";

/**
 * The `events` collection: every event of every workspace, moved here from the documents whose
 * change it reports (events/outbox-relay.ts), read by the events API and by webhook delivery, and kept for
 * the retention period (removed by a sweep; docs/design.md, Database: no TTL indexes).
 */

export type EventDoc = StoredEvent;

/** The events API's filters, as plain values. */
export interface EventFilters {
  /** Any of these types. */
  types?: EventType[];
}

/** The API shape: the stored body, exactly what deliveries carry. */
export const toEvent = (doc: EventDoc) => JSON.parse(doc.payload) as Schema<"Event">;

export class Events {
  readonly collection: Collection<EventDoc>;

  constructor(db: Db) {
    this.collection = db.collection<EventDoc>("events");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ workspace_id: 1, _id: -1 }, { name: "workspace_newest" });
    await this.collection.createIndex({ workspace_id: 1, type: 1, _id: -1 }, { name: "workspace_type" });
    await this.collection.createIndex({ created_at: 1 }, { name: "retention_sweep" });
  }

  /**
   * Stores events unless they are stored already, in one round trip: an event's `_id` is its id,
   * so a second relay of the same event (another process, or a retry after a crash) leaves it as
   * it is. Returns, per event, whether it was stored already (an earlier relay recorded it).
   */
  recordMany(events: StoredEvent[]): Promise<boolean[]> {
    return insertManyOnce(this.collection, events);
  }

  async get(workspaceId: string, id: string): Promise<EventDoc> {
    const doc = await this.collection.findOne({ _id: id, workspace_id: workspaceId });
    if (!doc) throw notFound("event", id);
    return doc;
  }

  /** A page of the workspace's events, newest first, one more than asked for `has_more`. */
  list(workspaceId: string, filters: EventFilters, page: Page): Promise<EventDoc[]> {
    // `created_at` is the event's `created` in whole seconds, so the bounds compare with what
    // clients see. One type is an equality the `workspace_type` index serves in id order.
    const filter: Record<string, unknown> = {};
    if (filters.types?.length) filter.type = { $in: filters.types };
    return newestFirst(this.collection, workspaceId, filter, page);
  }

  /** Removes events older than the retention period; returns how many went. */
  async sweep(retentionMs: number, now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - retentionMs);
    const { deletedCount } = await this.collection.deleteMany({ created_at: { $lt: cutoff } });
    return deletedCount;
  }
}
