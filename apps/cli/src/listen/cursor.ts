// Where `deskline listen` is in the workspace's event stream, as a pure value: which events it
// has handled and which it must still forward. No I/O: the follower reads the API with it and the
// state file stores it, so the rules below have table tests of their own.
//
// Why not just "the newest id seen": an event's id is made when its change happens, but it shows
// up in the events API only once relayed, which for concurrent writes may be in another order,
// and after a server crash up to a sweep interval (30 s, twice that in the worst case) later. So
// the cursor keeps every id handled within a look-back window behind the newest event and
// re-reads that window: a late event with an older id is still found and forwarded, once.

/** How far behind the newest handled event late arrivals are still looked for (seconds). */
export const LOOKBACK_SECONDS = 120;

export interface Cursor {
  /** Events created before this (Unix seconds) are never forwarded: before the start, or too late. */
  floor: number;
  /** The newest `created` handled so far (Unix seconds). */
  newest: number;
  /** Ids handled at or after `floor`, with their `created`. */
  seen: Record<string, number>;
}

/** The event fields the cursor reads. */
export interface EventRef {
  id: string;
  created: number;
}

/** A cursor that forwards everything created from `since` (Unix seconds) on. */
export function cursorFrom(since: number): Cursor {
  return { floor: since, newest: since, seen: {} };
}

/** The `created_after` of the next read: one second before the window opens (it is exclusive). */
export function createdAfter(cursor: Cursor): number {
  return Math.max(cursor.floor, cursor.newest - LOOKBACK_SECONDS) - 1;
}

/** Must this event still be forwarded? */
export function isPending(cursor: Cursor, event: EventRef): boolean {
  return event.created >= cursor.floor && !Object.hasOwn(cursor.seen, event.id);
}

/**
 * Records an event as handled, moves the window up to `newest - LOOKBACK_SECONDS` and forgets
 * the ids that fell out of it (so the state stays as small as the window). Returns a new cursor.
 */
export function markHandled(cursor: Cursor, event: EventRef): Cursor {
  const newest = Math.max(cursor.newest, event.created);
  const floor = Math.max(cursor.floor, newest - LOOKBACK_SECONDS);
  const seen: Record<string, number> = {};
  for (const [id, created] of Object.entries(cursor.seen)) if (created >= floor) seen[id] = created;
  if (event.created >= floor) seen[event.id] = event.created;
  return { floor, newest, seen };
}

/** A cursor read back from a state file, or undefined when it is not one. */
export function parseCursor(value: unknown): Cursor | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { floor, newest, seen } = value as Partial<Cursor>;
  if (!Number.isInteger(floor) || !Number.isInteger(newest)) return undefined;
  if (typeof seen !== "object" || seen === null || Array.isArray(seen)) return undefined;
  if (!Object.values(seen).every(Number.isInteger)) return undefined;
  return { floor: floor as number, newest: newest as number, seen };
}
