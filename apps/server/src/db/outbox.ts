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
 * `again` says that the event was recorded already: an earlier relay may have run the hooks (a
 * second creation is then no longer a no-op once the first job finished and went away).
 */
export type RelayHook = (event: StoredEvent, relay: { again: boolean }) => Promise<void>;

type Outboxed = { _id: string; pending_events?: StoredEvent[] };

/** Events written on one document, waiting for the relay. */
type PendingDocument = { collection: string; id: string; events: StoredEvent[] };

// At most this many documents per relay round: bounds one bulk write and one insertMany.
const RELAY_BATCH = 500;

export class EventRelay {
  private readonly hooks: RelayHook[] = [];
  private readonly tracked: Collection<Outboxed>[] = [];
  /** Written documents whose events await the next relay round (see afterWrite). */
  private readonly queue: PendingDocument[] = [];
  private readonly waiting: (() => void)[] = [];
  private flushing = false;

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
   * Called by the writer right after the write that recorded `events` on document `id`; resolves
   * once they are relayed. A failure here does not undo the change: it is logged and the sweep
   * relays the events later.
   *
   * Writers that finish while a relay is under way are relayed together next (group commit): a
   * lone write is relayed at once, and under load a batch costs the same three round trips as one
   * write (record the events, run the hooks, remove the pending copies), instead of two or more
   * per write.
   */
  afterWrite(collection: string, id: string, events: StoredEvent[]): Promise<void> {
    return this.afterWriteMany(collection, [{ id, events }]);
  }

  /** `afterWrite` for many documents of one collection written together (a batch). */
  afterWriteMany(collection: string, written: { id: string; events: StoredEvent[] }[]): Promise<void> {
    const relayed = written.filter((w) => w.events.length > 0);
    if (!this.options.immediate || relayed.length === 0) return Promise.resolve();
    return new Promise((done) => {
      for (const { id, events } of relayed) this.queue.push({ collection, id, events });
      this.waiting.push(done);
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, RELAY_BATCH);
      // Every writer waiting now has its documents in this batch or in an earlier one.
      const waiting = this.queue.length === 0 ? this.waiting.splice(0) : [];
      try {
        await this.relayAll(batch);
      } catch (err) {
        const ids = batch.map((b) => b.id);
        this.options.logger.warn({ err, ids }, "event relay failed; the sweep will retry");
      }
      for (const done of waiting) done();
    }
    this.flushing = false;
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

  private relay(collection: Collection<Outboxed>, id: string, events: StoredEvent[]): Promise<void> {
    return this.relayAll([{ collection: collection.collectionName, id, events }]);
  }

  /**
   * Records the events of every document in one round trip, runs the hooks, then removes the
   * pending copies, one bulk write per collection. Each step is idempotent, so a failure at any
   * point leaves pending copies that a later relay moves again without doubling anything.
   */
  private async relayAll(documents: PendingDocument[]): Promise<void> {
    const events = documents.flatMap((d) => d.events);
    if (events.length === 0) return;
    // `again`: the event was in `events` already, so an earlier relay of it ran (or began to run)
    // the hooks: this one repeats them.
    const recordedBefore = await this.events.recordMany(events);
    // The events of a round are independent (each hook is idempotent per event), so their hooks
    // run side by side: a round of 30 creates waits for one job insert, not for 30 in a row.
    await Promise.all(
      events.map(async (event, i) => {
        const relay = { again: recordedBefore[i] === true };
        for (const hook of this.hooks) await hook(event, relay);
      }),
    );
    const byCollection = new Map<string, PendingDocument[]>();
    for (const d of documents) {
      const same = byCollection.get(d.collection);
      if (same) same.push(d);
      else byCollection.set(d.collection, [d]);
    }
    for (const [name, written] of byCollection) {
      await this.db.collection<Outboxed>(name).bulkWrite(
        written.map(({ id, events: mine }) => ({
          // `_id` alone: the embedded fallback finds the document without a scan for no other
          // filter. The array stays behind empty; the sweep's index and query skip empty arrays.
          updateOne: {
            filter: { _id: id },
            update: { $pull: { pending_events: { _id: { $in: mine.map((e) => e._id) } } } },
          },
        })),
        { ordered: false },
      );
    }
  }
}
