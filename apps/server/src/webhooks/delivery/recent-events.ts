import type { StoredEvent } from "../../events/model.js";

/**
 * The bytes of the events this process queued deliveries for moments ago, so that a lane sending
 * them here reads none back from `events` (docs/decisions.md, "A lane lingers"). Bounded in count
 * and age: a retry minutes later, or an event past retention, is read from the store as before.
 * Only the deliveries queued with the bytes are served from here, and each once, for its first
 * attempt: a retry, a resend or a recovery (by any process) reads the stored bytes, which an
 * erasure may have changed since (docs/decisions.md, "Erasure").
 */

export type EventBytes = Pick<StoredEvent, "_id" | "payload" | "traceparent">;

/** A delivery as the cache asks of it: which it is, and of which event. */
export type DeliveryOfEvent = { _id: string; event_id: string };

const MAX_EVENTS = 1_000;
const MAX_AGE_MS = 60_000;

export class RecentEvents {
  private readonly events = new Map<string, { event: EventBytes; at: number; deliveries: Set<string> }>();

  /** Keeps `events` for `deliveries`, the ones just queued with them. */
  remember(events: readonly EventBytes[], deliveries: readonly DeliveryOfEvent[]): void {
    const at = Date.now();
    for (const { _id, payload, traceparent } of events) {
      const queued = deliveries.filter((d) => d.event_id === _id).map((d) => d._id);
      this.events.delete(_id);
      this.events.set(_id, { event: { _id, payload, traceparent }, at, deliveries: new Set(queued) });
    }
    // Oldest first (a Map keeps insertion order).
    for (const id of this.events.keys()) {
      if (this.events.size <= MAX_EVENTS) break;
      this.events.delete(id);
    }
  }

  /**
   * The events of `deliveries` still held for them (each delivery is served once), and the ids of
   * the others' events to read from the store.
   */
  take(deliveries: readonly DeliveryOfEvent[]): { found: EventBytes[]; missing: string[] } {
    const found = new Map<string, EventBytes>();
    const missing = new Set<string>();
    const fresh = Date.now() - MAX_AGE_MS;
    for (const { _id, event_id } of deliveries) {
      const held = this.events.get(event_id);
      if (held && held.at >= fresh && held.deliveries.delete(_id)) found.set(event_id, held.event);
      else missing.add(event_id);
    }
    for (const id of found.keys()) missing.delete(id);
    return { found: [...found.values()], missing: [...missing] };
  }
}
