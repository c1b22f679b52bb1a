import type {
  Collection,
  Db,
  Filter,
  IndexDescription,
  OptionalUnlessRequiredId,
  UpdateFilter,
} from "mongodb";
import type { StoredEvent } from "../events/model.js";
import { type EventRelay, pushEvent, type WithPendingEvents } from "../events/outbox-relay.js";
import { AGAIN, type BackoffPolicy, giveUpAfter, retry } from "../platform/backoff.js";
import { isDuplicateKey } from "../platform/database/errors.js";
import { concurrentUpdate, notFound } from "../platform/errors.js";

/**
 * The record base: what every collection of workspace-owned records shares (contacts, tickets,
 * conversations, messages, webhook endpoints). A store extends it, names its collection, its noun
 * (what a 404 calls a missing one) and its relay once, and states only what is particular to it.
 * How client-set fields are stored and patched is records/fields.ts; the list queries are
 * platform/database/lists.ts; a pull's records with their tombstones are records/pulled-records.ts.
 */

/** What any record of a workspace has: its id, unique in the collection, and its workspace. */
export interface Owned extends WithPendingEvents {
  _id: string;
  workspace_id: string;
}

/** The columns every mutable workspace-owned record stores besides its own fields. */
export interface RecordDoc extends Owned {
  /** Bumped by every update; a write applies only to the version it was decided on. */
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** Where a store's records live and what they are called. */
export interface RecordsOf {
  db: Db;
  /** The collection's name. */
  collection: string;
  /** What an answer calls one record ("contact", "webhook endpoint"): a 404 names it. */
  noun: string;
  /** Relays the events the records carry (events/outbox-relay.ts); none: they carry none. */
  relay?: EventRelay;
}

/** What a read-decide-write step decided: the fields to set (and unset), or nothing to write. */
export interface Decision<R> {
  set?: Record<string, unknown>;
  unset?: string[];
  /** The event the change emits, written by the same update (events/outbox-relay.ts). */
  event?: StoredEvent;
  result: R;
}

/** How long a write keeps retrying when other writes to the same record keep winning. */
export const CONTENDED_AFTER_MS = 3_000;
/** Between lost races: 1, 2, 4 … 50 ms, each a random point below it, so the racers spread out. */
export const CONTENDED_WRITE: BackoffPolicy = { firstMs: 1, factor: 2, maxMs: 50, jitter: "full" };

/** The records of one collection, each owned by one workspace. */
export class WorkspaceRecords<T extends Owned> {
  readonly collection: Collection<T>;
  protected readonly noun: string;
  protected readonly relay: EventRelay | undefined;
  private readonly name: string;

  constructor({ db, collection, noun, relay }: RecordsOf) {
    this.collection = db.collection<T>(collection);
    this.name = collection;
    this.noun = noun;
    this.relay = relay;
    // The relay's sweep looks for events left on this collection's documents.
    relay?.track(collection);
  }

  /**
   * Records of the workspace by id. The one cast of the base: a filter on the fields every `T`
   * has is not one TypeScript can check against a `Filter<T>` of a generic `T`.
   */
  protected inWorkspace(workspaceId: string, id: string | { $in: string[] }): Filter<T> {
    return { _id: id, workspace_id: workspaceId } as Filter<T>;
  }

  /** One record of the workspace; another workspace's id is exactly as missing as an unknown one. */
  async get(workspaceId: string, id: string): Promise<T> {
    const doc = await this.collection.findOne(this.inWorkspace(workspaceId, id));
    if (!doc) throw notFound(this.noun, id);
    return doc as T;
  }

  /** Whether the workspace has this record (a reference to it must name one of its own). */
  async exists(workspaceId: string, id: string): Promise<boolean> {
    const filter = this.inWorkspace(workspaceId, id);
    return (await this.collection.findOne(filter, { projection: { _id: 1 } })) !== null;
  }

  /** Which of these ids are records of the workspace. */
  async existingIds(workspaceId: string, ids: string[]): Promise<Set<string>> {
    const filter = this.inWorkspace(workspaceId, { $in: ids });
    const docs = await this.collection.find(filter, { projection: { _id: 1 } }).toArray();
    return new Set(docs.map((doc) => doc._id as string));
  }

  /**
   * Inserts a new record, or finds the one an earlier run of the same request made. An idempotent
   * request makes the same ids each time it runs (platform/ids.ts `withReplayableIds`), so when the
   * retry of a request whose process died mid-way finds its `_id` taken in the workspace, that
   * record (with its event still pending, or relayed already) is the first run's, and is returned
   * in place of a second one. Any other refusal is thrown. The events it carries are relayed.
   */
  protected async insertNew(doc: T): Promise<T> {
    let stored = doc;
    try {
      await this.collection.insertOne(doc as OptionalUnlessRequiredId<T>);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const made = await this.collection.findOne(this.inWorkspace(doc.workspace_id, doc._id));
      if (!made) throw error;
      stored = made as T;
    }
    await this.relayed(stored._id, stored.pending_events ?? []);
    return stored;
  }

  /** Relays the events just written on record `id` (events/outbox-relay.ts `afterWrite`). */
  protected async relayed(id: string, events: StoredEvent[]): Promise<void> {
    await this.relay?.afterWrite(this.name, id, events);
  }

  /** The same for many records written together (a batch). */
  protected async relayedMany(written: { id: string; events: StoredEvent[] }[]): Promise<void> {
    await this.relay?.afterWriteMany(this.name, written);
  }

  /** Deletes one record of the workspace, the events it still carries relayed first. */
  async delete(workspaceId: string, id: string): Promise<void> {
    const filter = this.inWorkspace(workspaceId, id);
    const deleted = this.relay
      ? (await this.relay.deleteDrained(this.collection, filter)) !== null
      : (await this.collection.deleteOne(filter)).deletedCount === 1;
    if (!deleted) throw notFound(this.noun, id);
  }

  /** One index per list filter, `{workspace_id, <field>, _id}`, so a page is read in index order. */
  protected listFilterIndexes(fields: readonly string[]): IndexDescription[] {
    return fields.map((field) => ({
      key: { workspace_id: 1, [field]: 1, _id: -1 },
      name: `workspace_${field}_newest`,
    }));
  }
}

/** Records that change: each write is version-checked (`updateInWorkspace`). */
export class MutableRecords<T extends RecordDoc> extends WorkspaceRecords<T> {
  /**
   * `{workspace_id, _id}`, unique: trivially so (ids are unique), which changes nothing on MongoDB,
   * where it serves the plain newest-first list (walked backwards) and every `{_id, workspace_id}`
   * lookup. mongo-java-server keeps only unique indexes and uses one only for a query on exactly its
   * fields, so there it is what makes those lookups a hash probe instead of a scan.
   *
   * `{workspace_id, _id, version}`, unique (trivially, as above): the filter of `updateInWorkspace`'s
   * conditional update. On MongoDB the `_id` index already finds that document, so this one only
   * costs its upkeep; on mongo-java-server, which uses an index only for a query on exactly its
   * fields, it turns every PATCH's update from a scan of the collection into a hash probe.
   *
   * Then one index per list filter (`listFilterIndexes`; docs/decisions.md lists them). All of them in
   * one `createIndexes`, with `others` the store adds: one round trip per collection at start.
   */
  protected async ensureRecordIndexes(
    listFields: readonly string[],
    others: readonly IndexDescription[] = [],
  ): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, _id: 1 }, unique: true, name: "workspace_id_unique" },
      { key: { workspace_id: 1, _id: 1, version: 1 }, unique: true, name: "version_check_unique" },
      ...others,
      ...this.listFilterIndexes(listFields),
    ]);
  }

  /**
   * Read-decide-write on one record, made safe by a conditional update (optimistic concurrency):
   * the write only applies if `version` is still the one that was read, so a concurrent change
   * makes this one re-read and decide again on the new state. Nothing is locked, and nothing
   * interleaves between a decision and the state it was made on (the ticket status machine relies
   * on this). `decide` returns no `set` to write nothing. After CONTENDED_AFTER_MS of losing,
   * answers 409 concurrent_update. The event a write carries is relayed.
   */
  protected async updateInWorkspace<R>(
    workspaceId: string,
    id: string,
    decide: (current: T) => Promise<Decision<R>>,
  ): Promise<R> {
    const written = await retry(
      CONTENDED_WRITE,
      async () => {
        const current = await this.get(workspaceId, id);
        const decision = await decide(current);
        if (!decision.set) return decision;
        const filter = { ...this.inWorkspace(workspaceId, id), version: current.version };
        const { matchedCount } = await this.collection.updateOne(filter, updateOf(decision));
        // Someone else wrote first (or deleted it: the next read says 404).
        return matchedCount === 1 ? decision : AGAIN;
      },
      { giveUp: giveUpAfter(CONTENDED_AFTER_MS, () => concurrentUpdate(this.noun)) },
    );
    const { event, result } = written as Decision<R>;
    if (event) await this.relayed(id, [event]);
    return result;
  }
}

/** The update a decision writes: its fields, the version bumped, its event pushed. */
function updateOf<T>({ set, unset, event }: Decision<unknown>): UpdateFilter<T> {
  const update: Record<string, unknown> = { $set: set, $inc: { version: 1 }, ...(event && pushEvent(event)) };
  if (unset?.length) update.$unset = Object.fromEntries(unset.map((field) => [field, ""]));
  return update as UpdateFilter<T>;
}
