import type { StoredEvent } from "../../events/model.js";

/**
 * The bytes of the events this process queued deliveries for moments ago, so that a lane sending
 * them here reads none back from `events` (docs/decisions.md, "A lane lingers"). Bounded in count
 * and age: a retry minutes later, or an event past retention, is read from the store as before.
 */

export type EventBytes = Pick<StoredEvent, "_id" | "payload" | "traceparent">;

const MAX_EVENTS = 1_000;
const MAX_AGE_MS = 60_000;

export class RecentEvents {
  private readonly events = new Map<string, { event: EventBytes; at: number }>();

  remember(events: readonly EventBytes[]): void {
    const at = Date.now();
    for (const { _id, payload, traceparent } of events) {
      this.events.delete(_id);
      this.events.set(_id, { event: { _id, payload, traceparent }, at });
    }
    // Oldest first (a Map keeps insertion order).
    for (const id of this.events.keys()) {
      if (this.events.size <= MAX_EVENTS) break;
      this.events.delete(id);
    }
  }

  /** The events of `ids` still held, and the ids to read from the store. */
  take(ids: readonly string[]): { found: EventBytes[]; missing: string[] } {
    const found: EventBytes[] = [];
    const missing: string[] = [];
    const fresh = Date.now() - MAX_AGE_MS;
    for (const id of ids) {
      const held = this.events.get(id);
      if (held && held.at >= fresh) found.push(held.event);
      else missing.push(id);
    }
    return { found, missing };
  }
}
