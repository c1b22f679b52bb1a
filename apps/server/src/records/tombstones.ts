import type { Collection, Db } from "mongodb";
import type { StoredEvent } from "../events/model.js";
import { type EventRelay, pushEvent, type WithPendingEvents } from "../events/outbox-relay.js";
import { deleteInBatches } from "../platform/database/batch-delete.js";
import { isDuplicateKey } from "../platform/database/errors.js";
import { afterPosition } from "../platform/database/lists.js";
import type { PullPosition } from "../platform/database/pull-cursor.js";
import type { Schema } from "../spec/types.js";

/**
 * Deleted contacts and tickets, so an incremental pull can tell a client what to remove
 * (spec: *Incremental pull*). A tombstone is written before its record is deleted: a crash in
 * between leaves a tombstone of a record that still exists, which the pull skips, and the retried
 * delete stamps it again. Kept TOMBSTONE_RETENTION_DAYS (as long as events unless set), then swept.
 *
 * An erased contact's tombstone is also the record of its erasure (contacts/erase.ts): it says when
 * it was erased, and carries the `contact.erased` event out (relayed like any record's events), so
 * the erasure and its event are one write, and a contact deleted before can still be erased.
 */

export type TombstoneObject = "contact" | "ticket";

export interface TombstoneDoc extends WithPendingEvents {
  /** The deleted record's id: one tombstone per record, however often its delete is retried. */
  _id: string;
  workspace_id: string;
  object: TombstoneObject;
  /** When it was deleted: its place in the pull's (`updated_at`, `id`) order. */
  updated_at: Date;
  merged_into: string | null;
  /** When the contact's personal data was erased (contacts/erase.ts); absent: it was not. */
  erased_at?: Date;
}

const COLLECTION = "tombstones";

export const toTombstone = (doc: TombstoneDoc): Schema<"Tombstone"> => ({
  id: doc._id,
  object: doc.object,
  deleted: true,
  deleted_at: doc.updated_at.toISOString(),
  merged_into: doc.merged_into,
});

export class Tombstones {
  private readonly collection: Collection<TombstoneDoc>;

  /** `relay`: moves the `contact.erased` events an erasure writes here into `events`. */
  constructor(
    db: Db,
    private readonly relay?: EventRelay,
  ) {
    this.collection = db.collection<TombstoneDoc>(COLLECTION);
    relay?.track(COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    // The pull reads one kind of a workspace in (updated_at, _id) order from a position.
    await this.collection.createIndexes([
      { key: { workspace_id: 1, object: 1, updated_at: 1, _id: 1 }, name: "workspace_object_pull" },
      { key: { updated_at: 1 }, name: "retention_sweep" },
    ]);
  }

  /** Records (or stamps anew) the deletion of a record; call it before deleting the record. */
  async record(workspaceId: string, object: TombstoneObject, id: string, mergedInto: string | null = null) {
    await this.collection.updateOne(
      { _id: id },
      { $set: { workspace_id: workspaceId, object, updated_at: new Date(), merged_into: mergedInto } },
      { upsert: true },
    );
  }

  /** The tombstone of a record, if it was deleted within the retention period. */
  find(workspaceId: string, id: string): Promise<TombstoneDoc | null> {
    return this.collection.findOne({ _id: id, workspace_id: workspaceId });
  }

  /**
   * Records that a contact of the workspace is erased, with `event` (made for the time of the
   * erasure), in one write: the tombstone is made (or one left by an earlier delete is marked) and
   * the event rides in it. Only the first erasure writes; a repeat finds `erased_at` set, and
   * relays whatever event a crash left. Returns when it was first erased, or null when the id is
   * another workspace's.
   */
  async markErased(workspaceId: string, id: string, event: (at: Date) => StoredEvent): Promise<Date | null> {
    const now = new Date();
    const filter = { _id: id, workspace_id: workspaceId, object: "contact" as const };
    try {
      await this.collection.updateOne(
        { ...filter, erased_at: { $exists: false } },
        {
          $set: { erased_at: now },
          $setOnInsert: { updated_at: now, merged_into: null },
          ...pushEvent(event(now)),
        },
        { upsert: true },
      );
    } catch (error) {
      // Erased already (the upsert's insert met the existing tombstone), or another workspace's id.
      if (!isDuplicateKey(error)) throw error;
    }
    const doc = await this.collection.findOne(filter, { projection: { erased_at: 1 } });
    await this.relay?.drain(COLLECTION, id);
    return doc?.erased_at ?? null;
  }

  /** The contacts a merge moved into `id` whose tombstones are still kept (their events are its person's). */
  async mergedInto(workspaceId: string, id: string): Promise<string[]> {
    const docs = await this.collection
      .find({ workspace_id: workspaceId, object: "contact", merged_into: id }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((doc) => doc._id);
  }

  /** A page of one kind's tombstones after `after`, oldest first, up to `upTo` when given. */
  since(
    workspaceId: string,
    object: TombstoneObject,
    after: PullPosition,
    limit: number,
    upTo?: Date,
  ): Promise<TombstoneDoc[]> {
    const query = afterPosition({ workspace_id: workspaceId, object }, after, upTo);
    return this.collection
      .find(query)
      .sort({ updated_at: 1, _id: 1 })
      .limit(limit + 1)
      .toArray();
  }

  /** Removes tombstones older than `retentionMs`, in batches; returns how many went. */
  sweep(retentionMs: number, now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, { updated_at: { $lt: new Date(now.getTime() - retentionMs) } });
  }
}
