/**
 * Fixtures made on one day must read the same on any later day: a stored expiry, a retry's due
 * time or an event's age is only meaningful relative to when the fixture was made. So every time
 * a fixture holds is moved by one offset, the one that puts the moment it was made at `now`; the
 * gaps between its times (a key kept 24 h, a retry due in an hour) stay as they were.
 */

/** RFC 3339 date-times as the API writes them (`2026-11-27T09:35:30.614Z`). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The latest time in `value` that had passed when it was written: its `created_at`/`updated_at`s. */
export function madeAt(value: unknown): number {
  let latest = Number.NEGATIVE_INFINITY;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === "object" && !(node instanceof Date)) {
      for (const [key, child] of Object.entries(node)) {
        if ((key === "created_at" || key === "updated_at") && child instanceof Date) {
          latest = Math.max(latest, child.getTime());
        } else visit(child);
      }
    }
  };
  visit(value);
  if (!Number.isFinite(latest)) throw new Error("the fixture holds no created_at or updated_at");
  return latest;
}

/** A copy of `value` with every `Date` and RFC 3339 string moved by `offsetMs`. */
export function shiftTimes<T>(value: T, offsetMs: number): T {
  const shift = (node: unknown): unknown => {
    if (node instanceof Date) return new Date(node.getTime() + offsetMs);
    if (typeof node === "string" && DATE_TIME.test(node)) {
      return new Date(Date.parse(node) + offsetMs).toISOString();
    }
    if (Array.isArray(node)) return node.map(shift);
    if (node && typeof node === "object" && Object.getPrototypeOf(node) === Object.prototype) {
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, shift(child)]));
    }
    return node; // ObjectId, Long, Binary …: not times
  };
  return shift(value) as T;
}

/** `value` with its times moved so that the moment it was made is `now`. */
export function relativeToNow<T>(value: T, now: number = Date.now()): T {
  return shiftTimes(value, now - madeAt(value));
}
