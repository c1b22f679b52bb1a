import type { Collection, Db, Filter } from "mongodb";
import { gathered } from "../platform/database/gather.js";
import type { Logger } from "../platform/logger.js";
import type { Events } from "./events.js";
import type { StoredEvent } from "./model.js";

/**
 * Events that can never be lost, without transactions (docs/decisions.md, "What a write's answer
 * waits for"). A change and its event are one document write: the event rides in the
 * `pending_events` array of the document that changed (`$push` in the same update, or the field of
 * the inserted document). The relay then moves it into `events`: record it (idempotent, its `_id`
 * is the event id), run the hooks (webhook delivery queues its deliveries there), and only then
 * remove the pending copy. A crash anywhere in between leaves the pending copy, which a later
 * relay (the sweep, in any process) moves again; recording and the hooks being idempotent, the
 * event ends up in `events` exactly once.
 *
 * The writer relays its own events right after its write (`afterWrite`) and answers once they are
 * in `events`, so a client that reads the events right after its write finds them; the hooks and
 * the removal follow in the background. The sweep only finds what a crashed or disconnected
 * writer left behind.
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
 * Runs for every batch of relayed events, after they are in `events` and before their pending
 * copies are removed, so a failure (or a crash) makes the relay run it again later. It must
 * therefore be idempotent: webhook delivery records one delivery per (event, endpoint) under an
 * id derived from both, so a second run records nothing.
 */
export type RelayHook = (events: StoredEvent[]) => Promise<void>;

type Outboxed = { _id: string; pending_events?: StoredEvent[] };

/** Events written on one document, waiting for the relay. */
type PendingDocument = { collection: string; id: string; events: StoredEvent[] };

// At most this many documents per relay round: bounds one bulk write and one insertMany.
const RELAY_BATCH = 500;

export class EventRelay {
  private readonly hooks: RelayHook[] = [];
  private readonly recordedListeners: ((events: StoredEvent[]) => void)[] = [];
  private readonly tracked: Collection<Outboxed>[] = [];
  /**
   * Records the events of the documents written while a recording is under way, together (group
   * commit, platform/database/gather.ts); each writer's call resolves once its events are in
   * `events`, or once their failure is logged.
   */
  private readonly recordWritten = gathered(async (written: PendingDocument[][]) => {
    await this.eachBatch(written.flat(), async (batch) => {
      await this.record(batch.flatMap((d) => d.events));
      for (const document of batch) void this.finish(document);
    });
    return written.map(() => undefined);
  }, RELAY_BATCH);
  /**
   * Runs the hooks for recorded documents and removes their pending copies, in batches gathered
   * the same way, in the background (a failure is logged; the sweep relays them again).
   */
  private readonly finish = gathered(async (recorded: PendingDocument[]) => {
    await this.eachBatch(recorded, async (batch) => {
      await this.runHooks(batch.flatMap((d) => d.events));
      await this.removePending(batch);
    });
    return recorded.map(() => undefined);
  }, RELAY_BATCH);

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

  /** Adds a listener told of the events each relay stored for the first time (metrics). */
  onRecorded(listener: (events: StoredEvent[]) => void): void {
    this.recordedListeners.push(listener);
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
   * once they are in `events` (the hooks and the removal of the pending copies follow). A failure
   * here does not undo the change: it is logged and the sweep relays the events later.
   *
   * Writers that finish while a recording is under way are recorded together next (group
   * commit): a lone write waits for one insert, and under load a batch costs the same.
   */
  afterWrite(collection: string, id: string, events: StoredEvent[]): Promise<void> {
    return this.afterWriteMany(collection, [{ id, events }]);
  }

  /** `afterWrite` for many documents of one collection written together (a batch). */
  afterWriteMany(collection: string, written: { id: string; events: StoredEvent[] }[]): Promise<void> {
    const relayed = written.filter((w) => w.events.length > 0);
    if (!this.options.immediate || relayed.length === 0) return Promise.resolve();
    return this.recordWritten(relayed.map(({ id, events }) => ({ collection, id, events })));
  }

  /**
   * Runs `step` on the documents RELAY_BATCH at a time (one bulk write and one insertMany each);
   * a failed batch is logged and left to the sweep, and the next goes on.
   */
  private async eachBatch(
    documents: PendingDocument[],
    step: (batch: PendingDocument[]) => Promise<void>,
  ): Promise<void> {
    for (let at = 0; at < documents.length; at += RELAY_BATCH) {
      const batch = documents.slice(at, at + RELAY_BATCH);
      try {
        await step(batch);
      } catch (err) {
        const ids = batch.map((b) => b.id);
        this.options.logger.warn({ err, ids }, "event relay failed; the sweep will retry");
      }
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
    await this.record(events);
    await this.runHooks(events);
    await this.removePending(documents);
  }

  /** Stores the events (those stored already are left alone) and tells the listeners of the new ones. */
  private async record(events: StoredEvent[]): Promise<void> {
    const inserted = await this.events.insertOnce(events);
    const fresh = events.filter((_, i) => inserted[i]);
    if (fresh.length > 0) for (const listener of this.recordedListeners) listener(fresh);
  }

  private async runHooks(events: StoredEvent[]): Promise<void> {
    for (const hook of this.hooks) await hook(events);
  }

  private async removePending(documents: PendingDocument[]): Promise<void> {
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
