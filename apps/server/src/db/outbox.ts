import type { Collection, Db, Filter } from "mongodb";
import type { StoredEvent } from "../domain/events.js";
import type { Logger } from "../logger.js";
import type { Events } from "./events.js";

/**
 * Events that can never be lost, without transactions (DESIGN.md §6). A change and its event are
 * one document write: the event rides in the `pending_events` array of the document that changed
 * (`$push` in the same update, or the field of the inserted document). The relay then moves it
 * into `events`: record it (idempotent, its `_id` is the event id), run the hooks (webhook delivery
 * creates its jobs there), and only then remove the pending copy. A crash anywhere in between
 * leaves the pending copy, which a later relay (the sweep, in any process) moves again; recording
 * and the hooks being idempotent, the event ends up in `events` exactly once.
 *
 * The writer relays its own events right after its write (`afterWrite`), so the common case costs
 * no waiting; the sweep only finds what a crashed or disconnected writer left behind.
 */

/** The field of a resource document that holds its events until the relay moves them. */
export interface WithPendingEvents {
  pending_events?: StoredEvent[];
}

/** The update fragment that records `event` in the same update as the change it reports. */
export function pushEvent(event: StoredEvent): { $push: { pending_events: StoredEvent } } {
  return { $push: { pending_events: event } };
}

/** A document with no event waiting to be relayed (the only kind that may be deleted). */
const DRAINED = { $or: [{ pending_events: { $exists: false } }, { pending_events: { $size: 0 } }] };

/**
 * Runs for every relayed event, after it is in `events` and before its pending copy is removed,
 * so a failure (or a crash) makes the relay run it again later. It must therefore be idempotent:
 * webhook delivery creates one job per (event, endpoint) keyed so that a second creation is a no-op.
 */
export type RelayHook = (event: StoredEvent) => Promise<void>;

type Outboxed = { _id: string; pending_events?: StoredEvent[] };

export class EventRelay {
  private readonly hooks: RelayHook[] = [];
  private readonly tracked: Collection<Outboxed>[] = [];

  constructor(
    private readonly db: Db,
    private readonly events: Events,
    private readonly options: { immediate: boolean; logger: Logger },
  ) {}

  /** A collection whose documents carry pending events: the sweep looks there. */
  track(name: string): void {
    this.tracked.push(this.db.collection<Outboxed>(name));
  }

  /** Adds a step to every relay (see RelayHook). */
  addHook(hook: RelayHook): void {
    this.hooks.push(hook);
  }

  async ensureIndexes(): Promise<void> {
    // Sparse: only documents with pending events are in it, so the sweep reads a tiny index on
    // MongoDB (the embedded fallback ignores it and scans, which the sweep's interval allows for).
    for (const collection of this.tracked) {
      await collection.createIndex(
        { "pending_events.created_at": 1 },
        { name: "pending_events", sparse: true },
      );
    }
  }

  /**
   * Called by the writer right after the write that recorded `events` on document `id`. A failure
   * here does not undo the change: it is logged and the sweep relays the events later.
   */
  async afterWrite(collection: string, id: string, events: StoredEvent[]): Promise<void> {
    if (!this.options.immediate || events.length === 0) return;
    try {
      await this.relay(this.db.collection<Outboxed>(collection), id, events);
    } catch (err) {
      this.options.logger.warn({ err, collection, id }, "event relay failed; the sweep will retry");
    }
  }

  /**
   * `afterWrite` for many documents of one collection written together (a batch): the events are
   * recorded in one round trip and their pending copies removed in another.
   */
  async afterWriteMany(collection: string, written: { id: string; events: StoredEvent[] }[]): Promise<void> {
    const events = written.flatMap((w) => w.events);
    // The driver refuses an empty bulk write.
    if (!this.options.immediate || events.length === 0) return;
    try {
      await this.events.recordMany(events);
      for (const event of events) for (const hook of this.hooks) await hook(event);
      const removals = written.flatMap(({ id, events: mine }) =>
        mine.map((event) => ({
          // `_id` alone, as removePending, so the fallback finds each document without a scan.
          updateOne: { filter: { _id: id }, update: { $pull: { pending_events: { _id: event._id } } } },
        })),
      );
      await this.db.collection<Outboxed>(collection).bulkWrite(removals, { ordered: false });
    } catch (err) {
      this.options.logger.warn({ err, collection }, "event relay failed; the sweep will retry");
    }
  }

  /** Moves every event still pending on one document of `collection` into `events`. */
  async drain(collection: string, id: string): Promise<void> {
    const target = this.db.collection<Outboxed>(collection);
    const doc = await target.findOne({ _id: id }, { projection: { pending_events: 1 } });
    if (doc?.pending_events?.length) await this.relay(target, id, doc.pending_events);
  }

  /**
   * Deletes the document `filter` names once it carries no pending events, relaying them first,
   * so deleting a record right after changing it cannot take its events along. Returns the
   * deleted document, or null when none matched.
   */
  async deleteDrained<T extends Outboxed>(collection: Collection<T>, filter: Filter<T>): Promise<T | null> {
    for (;;) {
      const deleted = await collection.findOneAndDelete({ $and: [filter, DRAINED] } as Filter<T>);
      if (deleted) return deleted as T;
      const doc = await collection.findOne(filter, { projection: { pending_events: 1 } });
      if (!doc) return null;
      // Another write may push a new event between this relay and the next delete; then loop.
      await this.relay(collection as unknown as Collection<Outboxed>, doc._id, doc.pending_events ?? []);
    }
  }

  /**
   * Relays the events left on documents for longer than `graceMs` (a writer relays its own
   * within milliseconds; older ones were left by a crash or an outage). Safe in every process at
   * once. Returns how many events it moved.
   */
  async sweep(graceMs: number, now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - graceMs);
    let moved = 0;
    for (const collection of this.tracked) {
      const stale = collection.find(
        { "pending_events.created_at": { $lt: cutoff } },
        { projection: { pending_events: 1 } },
      );
      for await (const doc of stale) {
        const events = doc.pending_events ?? [];
        await this.relay(collection, doc._id, events);
        moved += events.length;
      }
    }
    return moved;
  }

  private async relay(collection: Collection<Outboxed>, id: string, events: StoredEvent[]): Promise<void> {
    for (const event of events) {
      await this.events.record(event);
      for (const hook of this.hooks) await hook(event);
      await removePending(collection, id, event._id);
    }
  }
}

/**
 * Removes a relayed event from its document. The filter is the `_id` alone (the embedded
 * fallback scans the collection for any other filter), so the array stays behind empty; the
 * sweep's index and query only see documents with an event in it.
 */
async function removePending(collection: Collection<Outboxed>, id: string, eventId: string): Promise<void> {
  await collection.updateOne({ _id: id }, { $pull: { pending_events: { _id: eventId } } });
}
