import type { Collection, Db } from "mongodb";
import { deleteInBatches } from "../platform/database/batch-delete.js";
import { insertManyOnce } from "../platform/database/insert-once.js";
import { newestFirst, type Page } from "../platform/database/lists.js";
import { notFound } from "../platform/errors.js";
import { escapeRegex } from "../platform/regex.js";
import type { Schema } from "../spec/types.js";
import type { EventType, StoredEvent } from "./model.js";

/**
 * The `events` collection: every event of every workspace, moved here from the documents whose
 * change it reports (events/outbox-relay.ts), read by the events API and by webhook delivery, and kept for
 * the retention period (removed by a sweep; docs/design.md, Database: no TTL indexes). The
 * retention rule lives here alone: every read for a client (`get`, `list`, and the routes built on
 * them) and the sweep ask `keptSince`, so an event past retention is gone for clients at once,
 * not only once the hourly sweep has removed it.
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

  /** `retentionMs`: how long an event is kept (`EVENT_RETENTION_DAYS`, config.eventRetentionMs). */
  constructor(
    db: Db,
    readonly retentionMs: number,
  ) {
    this.collection = db.collection<EventDoc>("events");
  }

  /** The oldest `created_at` an event may have and still be kept (clients see it, the sweep spares it). */
  keptSince(now = new Date()): Date {
    return new Date(now.getTime() - this.retentionMs);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, _id: -1 }, name: "workspace_newest" },
      { key: { workspace_id: 1, type: 1, _id: -1 }, name: "workspace_type" },
      { key: { created_at: 1 }, name: "retention_sweep" },
    ]);
  }

  /**
   * Stores events unless they are stored already, in one round trip: an event's `_id` is its id,
   * so a second relay of the same event (another process, or a retry after a crash) leaves it as
   * it is. Returns, per event, whether it was inserted now (false: an earlier relay stored it).
   */
  insertOnce(events: StoredEvent[]): Promise<boolean[]> {
    return insertManyOnce(this.collection, events);
  }

  /** An event of the workspace still kept; past retention it is missing, swept or not. */
  async get(workspaceId: string, id: string): Promise<EventDoc> {
    const doc = await this.collection.findOne({
      _id: id,
      workspace_id: workspaceId,
      created_at: { $gte: this.keptSince() },
    });
    if (!doc) throw notFound("event", id);
    return doc;
  }

  /** The bytes webhook delivery sends of these events, those still kept (past retention: left out). */
  payloadsOf(ids: string[]): Promise<Pick<EventDoc, "_id" | "payload" | "traceparent">[]> {
    return this.collection
      .find(
        { _id: { $in: ids }, created_at: { $gte: this.keptSince() } },
        { projection: { payload: 1, traceparent: 1 } },
      )
      .toArray();
  }

  /** Of these events, the ids of those still kept (a resend of a delivery asks whether its event is). */
  async keptOf(ids: string[]): Promise<Set<string>> {
    const docs = await this.collection
      .find({ _id: { $in: ids }, created_at: { $gte: this.keptSince() } }, { projection: { _id: 1 } })
      .toArray();
    return new Set(docs.map((doc) => doc._id));
  }

  /**
   * A page of a recovery's window (webhooks/recovery/job.ts): the workspace's events created
   * between `since` and `until` (both included) after the id `after`, oldest first, of `types`
   * (all when null), none about `endpointId` (an operational event never goes to its endpoint).
   */
  recoveryPage(
    window: {
      workspaceId: string;
      since: Date;
      until: Date;
      after: string;
      types: readonly string[] | null;
      /** Read the payloads too (an endpoint's content filter reads them). */
      payloads?: boolean;
    },
    endpointId: string,
    limit: number,
  ): Promise<(Pick<EventDoc, "_id" | "workspace_id" | "type" | "created_at"> & { payload?: string })[]> {
    const filter: Record<string, unknown> = {
      workspace_id: window.workspaceId,
      created_at: { $gte: window.since, $lte: window.until },
      about_endpoint_id: { $ne: endpointId },
      // A test event went to its endpoint once; no recovery sends it again (events/model.ts).
      test_endpoint_id: { $exists: false },
    };
    if (window.after) filter._id = { $gt: window.after };
    if (window.types) filter.type = { $in: [...window.types] };
    return this.collection
      .find(filter, {
        projection: {
          _id: 1,
          workspace_id: 1,
          type: 1,
          created_at: 1,
          ...(window.payloads && { payload: 1 }),
        },
      })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
  }

  /** A page of the workspace's kept events, newest first, one more than asked for `has_more`. */
  list(workspaceId: string, filters: EventFilters, page: Page): Promise<EventDoc[]> {
    // `created_at` is the event's `created` in whole seconds, so the bounds compare with what
    // clients see. One type is an equality the `workspace_type` index serves in id order.
    const filter: Record<string, unknown> = {};
    if (filters.types?.length) filter.type = { $in: filters.types };
    // Retention is one more lower bound on `created_at`; the page's bound is exclusive, so the
    // kept instant goes in one millisecond earlier (Dates count whole milliseconds).
    const kept = new Date(this.keptSince().getTime() - 1);
    const createdAfter = page.createdAfter && page.createdAfter > kept ? page.createdAfter : kept;
    return newestFirst(this.collection, workspaceId, filter, { ...page, createdAfter });
  }

  /**
   * Replaces the `data` of every stored event of the workspace about one resource (`data` is it:
   * its `object` and `id`) with `marker`, and empties `previous_attributes`, which held its old
   * values (docs/decisions.md, "Erasure"). Kept or past retention alike, as long as it is stored.
   * Ids, types and times stay, so deliveries, attempts and recoveries still name the event, and
   * later sends carry the marker. Answers the ids of all the events about it, those a run before
   * erased too, so a repeat still finds what hangs off them; `erased`: how many changed now.
   */
  async eraseData(
    workspaceId: string,
    about: { object: string; id: string },
    marker: object,
  ): Promise<{ ids: string[]; erased: number }> {
    // The id is in the payload's text: a scan of the workspace's events, read once per erasure.
    const found = this.collection.find(
      { workspace_id: workspaceId, payload: { $regex: escapeRegex(about.id) } },
      { projection: { _id: 1, payload: 1 } },
    );
    const ids: string[] = [];
    let erased = 0;
    for await (const { _id, payload } of found) {
      const body = JSON.parse(payload) as { data?: Record<string, unknown>; previous_attributes?: object };
      if (body.data?.object !== about.object || body.data.id !== about.id) continue;
      ids.push(_id);
      if (body.data.erased === true) continue;
      const scrubbed = {
        ...body,
        data: marker,
        ...(body.previous_attributes && { previous_attributes: {} }),
      };
      const { modifiedCount } = await this.collection.updateOne(
        { _id, payload },
        { $set: { payload: JSON.stringify(scrubbed) } },
      );
      erased += modifiedCount;
    }
    return { ids, erased };
  }

  /** Removes events past retention, in batches; returns how many went. */
  sweep(now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, { created_at: { $lt: this.keptSince(now) } });
  }
}
