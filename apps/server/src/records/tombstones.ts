import type { Collection, Db } from "mongodb";
import { deleteInBatches } from "../platform/database/batch-delete.js";
import { afterPosition } from "../platform/database/lists.js";
import type { PullPosition } from "../platform/database/pull-cursor.js";
import type { Schema } from "../spec/types.js";

/**
 * Deleted contacts and tickets, so an incremental pull can tell a client what to remove
 * (spec: *Incremental pull*). A tombstone is written before its record is deleted: a crash in
 * between leaves a tombstone of a record that still exists, which the pull skips, and the retried
 * delete stamps it again. Kept TOMBSTONE_RETENTION_DAYS (as long as events unless set), then swept.
 */

export type TombstoneObject = "contact" | "ticket";

export interface TombstoneDoc {
  /** The deleted record's id: one tombstone per record, however often its delete is retried. */
  _id: string;
  workspace_id: string;
  object: TombstoneObject;
  /** When it was deleted: its place in the pull's (`updated_at`, `id`) order. */
  updated_at: Date;
  merged_into: string | null;
}

export const toTombstone = (doc: TombstoneDoc): Schema<"Tombstone"> => ({
  id: doc._id,
  object: doc.object,
  deleted: true,
  deleted_at: doc.updated_at.toISOString(),
  merged_into: doc.merged_into,
});

export class Tombstones {
  private readonly collection: Collection<TombstoneDoc>;

  constructor(db: Db) {
    this.collection = db.collection<TombstoneDoc>("tombstones");
  }

  async ensureIndexes(): Promise<void> {
    // The pull reads one kind of a workspace in (updated_at, _id) order from a position.
    await this.collection.createIndex(
      { workspace_id: 1, object: 1, updated_at: 1, _id: 1 },
      { name: "workspace_object_pull" },
    );
    await this.collection.createIndex({ updated_at: 1 }, { name: "retention_sweep" });
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
