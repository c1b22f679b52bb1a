import type { Collection, Filter } from "mongodb";
import type { PullPosition } from "./pull-cursor.js";

/**
 * The two list orders every collection reads in: a page newest first (the list endpoints) and a
 * page oldest change first (incremental pulls). Plain queries over a collection, kept apart from
 * records.ts so that collections which are no mutable record (events, deliveries, attempts) list
 * through them too without depending on the record base.
 */

type Listed = { _id: string; workspace_id: string; created_at: Date };
type Pulled = { _id: string; workspace_id: string; updated_at: Date };

/** `query` with the exclusive `created_at` bounds a list or pull window gives, if any. */
function withCreatedBounds(
  query: Record<string, unknown>,
  bounds: { createdAfter?: Date; createdBefore?: Date },
): Record<string, unknown> {
  const created: Record<string, Date> = {};
  if (bounds.createdAfter !== undefined) created.$gt = bounds.createdAfter;
  if (bounds.createdBefore !== undefined) created.$lt = bounds.createdBefore;
  return Object.keys(created).length ? { ...query, created_at: created } : query;
}

/** The list window of a request: plain values from platform/http/paging.ts, turned into a query here. */
export interface Page {
  limit: number;
  /** An id: the page continues after it (it need not exist any more). */
  startingAfter?: string;
  /** Exclusive bounds on `created_at`. */
  createdAfter?: Date;
  createdBefore?: Date;
}

/**
 * A list query: the workspace, the resource's filters and the page, newest first (ids sort by
 * creation time), one more than asked so the caller knows `has_more`. Each collection has an
 * index `{workspace_id, <filter field>, _id}` per equality filter, so MongoDB walks one index in
 * order and stops after `limit + 1` matches.
 */
export function newestFirst<T extends Listed>(
  collection: Collection<T>,
  workspaceId: string,
  filter: Record<string, unknown>,
  page: Page,
): Promise<T[]> {
  // One flat filter, the shape both MongoDB's planner and mongo-java-server's matcher handle best.
  const query: Record<string, unknown> = { ...filter, workspace_id: workspaceId };
  if (page.startingAfter !== undefined) query._id = { $lt: page.startingAfter };
  return collection
    .find(withCreatedBounds(query, page) as Filter<T>)
    .sort({ _id: -1 })
    .limit(page.limit + 1)
    .toArray() as Promise<T[]>;
}

/**
 * `filter` narrowed to what an incremental pull reads after `after`: changed strictly after its
 * instant, or at that instant with a greater id; and not after `upTo` when given. One flat
 * range on `updated_at` plus an `$or` that only breaks ties, so the `{workspace_id, updated_at,
 * _id}` index serves it as one range.
 */
export function afterPosition<T extends Record<string, unknown>>(
  filter: T,
  after: PullPosition,
  upTo?: Date,
): T & Record<string, unknown> {
  const range: Record<string, Date> = after.id ? { $gte: after.updatedAt } : { $gt: after.updatedAt };
  if (upTo) range.$lte = upTo;
  const query: Record<string, unknown> = { ...filter, updated_at: range };
  if (after.id) {
    const ties = [{ updated_at: { $gt: after.updatedAt } }, { _id: { $gt: after.id } }];
    // The resource's own filters may carry an `$or` already (a contact `search`).
    if (query.$or) {
      query.$and = [{ $or: query.$or }, { $or: ties }];
      delete query.$or;
    } else query.$or = ties;
  }
  return query as T & Record<string, unknown>;
}

/** The window of one incremental pull page, as plain values (platform/http/paging.ts parses them). */
export interface PullWindow {
  limit: number;
  after: PullPosition;
  createdAfter?: Date;
  createdBefore?: Date;
}

/**
 * A pull query: the workspace's records matching `filter`, changed after the window's position,
 * oldest change first by (`updated_at`, `_id`), one more than asked. Served by the
 * `{workspace_id, updated_at, _id}` index on MongoDB (the fallback scans).
 */
export function oldestChangeFirst<T extends Pulled>(
  collection: Collection<T>,
  workspaceId: string,
  filter: Record<string, unknown>,
  window: PullWindow,
  upTo?: Date,
): Promise<T[]> {
  const query = afterPosition({ ...filter, workspace_id: workspaceId }, window.after, upTo);
  return collection
    .find(withCreatedBounds(query, window) as Filter<T>)
    .sort({ updated_at: 1, _id: 1 })
    .limit(window.limit + 1)
    .toArray() as Promise<T[]>;
}
