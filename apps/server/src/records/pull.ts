import { setTimeout as sleep } from "node:timers/promises";
import type { PullWindow } from "../platform/database/lists.js";
import { encodeCursor, type PullPosition } from "../platform/database/pull-cursor.js";
import type { ListPage } from "../platform/http/paging.js";
import type { Schema } from "../spec/types.js";
import { type TombstoneDoc, toTombstone } from "./tombstones.js";

/**
 * One page of an incremental pull (spec: *Incremental pull*): a resource's changed records and its
 * tombstones merged into one (`updated_at`, `id`) order under one cursor, settled so that no page
 * passes over a write that is still committing.
 *
 * Why the settling: a write stamps `updated_at` just before it commits, so a write stamped T1
 * can become visible after one stamped T2 > T1. A page read in between would end at T2 and the
 * next page would start after it, missing T1 for good. So a page whose last item is younger than
 * `settleMs` (SYNC_SETTLE_MS: stamp-to-commit time plus clock skew between processes) waits until
 * it is that old, then reads again up to that item: by then everything stamped before it has
 * committed. Pages of older changes (a backlog, a first export) never wait.
 */

type Stamped = { _id: string; updated_at: Date };

export interface PullSource<T extends Stamped> {
  /** Up to `limit + 1` records after the window's position, oldest change first, up to `upTo`. */
  records(upTo?: Date): Promise<T[]>;
  /** The same for tombstones. */
  tombstones(upTo?: Date): Promise<TombstoneDoc[]>;
  /** Which of these ids still have their record (a delete that crashed before deleting). */
  existing(ids: string[]): Promise<Set<string>>;
}

export interface PulledPage<T> {
  records: T[];
  tombstones: TombstoneDoc[];
  hasMore: boolean;
  /** Where the next page starts: the last item of this one, or the window's own position. */
  position: PullPosition;
}

type Item<T> = { record: T } | { tombstone: TombstoneDoc };

const stampOf = <T extends Stamped>(item: Item<T>): Stamped =>
  "record" in item ? item.record : item.tombstone;

function byPosition<T extends Stamped>(a: Item<T>, b: Item<T>): number {
  const x = stampOf(a);
  const y = stampOf(b);
  return x.updated_at.getTime() - y.updated_at.getTime() || (x._id < y._id ? -1 : x._id > y._id ? 1 : 0);
}

async function read<T extends Stamped>(source: PullSource<T>, upTo?: Date): Promise<Item<T>[]> {
  const [records, tombstones] = await Promise.all([source.records(upTo), source.tombstones(upTo)]);
  // Each side holds its first limit + 1, so the first limit + 1 of the merge are right.
  return [...records.map((record) => ({ record })), ...tombstones.map((tombstone) => ({ tombstone }))].sort(
    byPosition,
  );
}

export async function pullPage<T extends Stamped>(
  source: PullSource<T>,
  window: PullWindow,
  settleMs: number,
): Promise<PulledPage<T>> {
  const readAt = Date.now();
  let items = await read(source, undefined);
  let hasMore = items.length > window.limit;
  let page = items.slice(0, window.limit);
  const last = page.at(-1);
  if (last && stampOf(last).updated_at.getTime() + settleMs > readAt) {
    const frontier = stampOf(last).updated_at;
    await sleep(frontier.getTime() + settleMs - Date.now());
    items = await read(source, frontier);
    // Items past the frontier were seen by the first read; they are still to come.
    hasMore ||= items.length > window.limit;
    page = items.slice(0, window.limit);
  }
  const end = page.at(-1);
  const position = end ? { updatedAt: stampOf(end).updated_at, id: stampOf(end)._id } : window.after;
  const records: T[] = [];
  const tombstones: TombstoneDoc[] = [];
  for (const item of page) {
    if ("record" in item) records.push(item.record);
    else tombstones.push(item.tombstone);
  }
  const alive = tombstones.length ? await source.existing(tombstones.map((t) => t._id)) : new Set();
  return { records, tombstones: tombstones.filter((t) => !alive.has(t._id)), hasMore, position };
}

/** A pull's page: the list envelope plus its tombstones and where the next page starts. */
export function toPulledPage<Doc, Out>(
  pulled: PulledPage<Doc>,
  shape: (doc: Doc) => Out,
): ListPage<Out> & { deleted: Schema<"Tombstone">[]; next_cursor: string } {
  return {
    object: "list",
    data: pulled.records.map(shape),
    has_more: pulled.hasMore,
    next_cursor: encodeCursor(pulled.position),
    deleted: pulled.tombstones.map((doc: TombstoneDoc) => toTombstone(doc)),
  };
}
