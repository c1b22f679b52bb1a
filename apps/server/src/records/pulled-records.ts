import type { IndexDescription } from "mongodb";
import type { EventRelay } from "../events/outbox-relay.js";
import { newestFirst, oldestChangeFirst, type Page, type PullWindow } from "../platform/database/lists.js";
import { notFound } from "../platform/errors.js";
import { pullPage } from "./pull.js";
import { MutableRecords, type RecordDoc, type RecordsOf } from "./record.js";
import { type SearchWindow, searchPage } from "./search/sorted-page.js";
import type { TombstoneObject, Tombstones } from "./tombstones.js";

/**
 * Records a client can pull incrementally (spec: *Incremental pull*): contacts and tickets. Each
 * is listed newest first and pulled oldest change first through the same filters, and each delete
 * leaves a tombstone, so that a pull learns of every deletion. A store states its filters
 * (`filterOf`); the list, the pull and the delete are the same for every such collection.
 */
export abstract class PulledRecords<T extends RecordDoc, Filters> extends MutableRecords<T> {
  private readonly tombstones: Tombstones;
  private readonly object: TombstoneObject;

  constructor(of: RecordsOf & { noun: TombstoneObject; relay: EventRelay; tombstones: Tombstones }) {
    super(of);
    this.tombstones = of.tombstones;
    this.object = of.noun;
  }

  /** The list filters as a query (platform/database/lists.ts adds the workspace and the page). */
  protected abstract filterOf(filters: Filters): Record<string, unknown>;

  /** The record indexes (records/record.ts), then the pull's order, read as one index range. */
  protected override async ensureRecordIndexes(
    listFields: readonly string[],
    others: readonly IndexDescription[] = [],
  ): Promise<void> {
    await super.ensureRecordIndexes(listFields, [
      { key: { workspace_id: 1, updated_at: 1, _id: 1 }, name: "workspace_pull" },
      ...others,
    ]);
  }

  /** A page of the workspace's records, newest first, one more than asked for `has_more`. */
  list(workspaceId: string, filters: Filters, page: Page): Promise<T[]> {
    return newestFirst(this.collection, workspaceId, this.filterOf(filters), page);
  }

  /** A page of a search (records/search/): `filter` in the window's sort, after its cursor. */
  search(workspaceId: string, filter: Record<string, unknown>, window: SearchWindow): Promise<T[]> {
    return searchPage(this.collection, workspaceId, filter, window);
  }

  /** A page of an incremental pull: changed records and deleted ones (records/pull.ts). */
  pull(workspaceId: string, filters: Filters, window: PullWindow, settleMs: number) {
    const filter = this.filterOf(filters);
    return pullPage<T>(
      {
        records: (upTo) => oldestChangeFirst(this.collection, workspaceId, filter, window, upTo),
        tombstones: (upTo) =>
          this.tombstones.since(workspaceId, this.object, window.after, window.limit, upTo),
        existing: (ids) => this.existingIds(workspaceId, ids),
      },
      window,
      settleMs,
    );
  }

  /**
   * Deletes one record of the workspace, its tombstone first: a crash in between leaves the record
   * and a tombstone the pull skips while the record exists; the retried delete stamps it anew.
   * `mergedInto` names the record a merge moved it into.
   */
  override async delete(workspaceId: string, id: string, mergedInto: string | null = null): Promise<void> {
    if (!(await this.exists(workspaceId, id))) throw notFound(this.object, id);
    await this.tombstones.record(workspaceId, this.object, id, mergedInto);
    await super.delete(workspaceId, id);
  }
}
