import { isDeepStrictEqual } from "node:util";
import type { Collection, Filter, OptionalUnlessRequiredId, UpdateFilter } from "mongodb";
import type { StoredEvent } from "../events/model.js";
import { type EventRelay, pushEvent, type WithPendingEvents } from "../events/outbox-relay.js";
import { AGAIN, type BackoffPolicy, giveUpAfter, retry } from "../platform/backoff.js";
import { isDuplicateKey } from "../platform/database/errors.js";
import { concurrentUpdate, DomainError, notFound } from "../platform/errors.js";

/**
 * What every public resource shares (contacts, tickets…): how its client-set fields are stored,
 * shown and patched, and how one record of a workspace is found and updated safely (the list
 * queries are platform/database/lists.ts, the errors they raise errors.ts).
 * Each collection module keeps its own rules and queries; this is only the common ground.
 */

/** The columns every workspace-owned record stores besides its own fields. */
export interface RecordDoc extends WithPendingEvents {
  _id: string;
  workspace_id: string;
  /** Bumped by every update; a write applies only to the version it was decided on. */
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** How a resource's client-set fields behave. */
export interface FieldRules<F extends string> {
  /** The fields, in the order the response lists them. */
  fields: readonly F[];
  /** What an unset field reads as when that is not null: arrays `[]`, flags `false`, maps `{}`. */
  empty?: Partial<Record<F, unknown>>;
  /** Array fields kept free of duplicates (the first occurrence stays). */
  deduped?: ReadonlySet<F>;
  /** RFC 3339 fields, stored as dates so they compare and sort as instants. */
  dates?: ReadonlySet<F>;
  /** Fields the server sets (e.g. a ticket's `solved_at`): shown after `fields`, never read from a body. */
  serverSet?: readonly string[];
}

/** A field's value as stored, `null`/absent read as its empty value. */
export function storedValue<F extends string>(rules: FieldRules<F>, doc: object, field: F): unknown {
  return (doc as Record<string, unknown>)[field] ?? rules.empty?.[field] ?? null;
}

/** A value from a request body as it is stored. */
export function normalizeField<F extends string>(rules: FieldRules<F>, field: F, value: unknown): unknown {
  if (value === null || value === undefined) return rules.empty?.[field] ?? null;
  if (rules.deduped?.has(field)) return [...new Set(value as unknown[])];
  if (rules.dates?.has(field)) {
    const date = new Date(value as string);
    // The spec's date-time format lets a leap second through; Date cannot hold it.
    if (Number.isNaN(date.getTime())) {
      throw new DomainError("invalid", "parameter_invalid", `\`${field}\` is not a valid RFC 3339 time.`, {
        param: field,
      });
    }
    return date;
  }
  return value;
}

/** Every field of a create body as stored; fields not sent are unset. */
export function normalizeInput<F extends string>(
  rules: FieldRules<F>,
  input: Partial<Record<F, unknown>>,
): Record<F, unknown> {
  const out = {} as Record<F, unknown>;
  for (const field of rules.fields) out[field] = normalizeField(rules, field, input[field]);
  return out;
}

/** The API shape: `id`, `object`, every field (null when unset, never absent), RFC 3339 times. */
export function toResource<F extends string>(
  rules: FieldRules<F>,
  object: string,
  doc: RecordDoc,
): Record<string, unknown> {
  const out: Record<string, unknown> = { id: doc._id, object };
  for (const field of [...rules.fields, ...(rules.serverSet ?? []), "created_at", "updated_at"]) {
    const value = storedValue(rules, doc, field as F);
    out[field] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

/**
 * Values as the API shows them (RFC 3339 for times): an event's `previous_attributes` from the
 * stored old values of a diff.
 */
export function publicValues(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(values)) {
    out[field] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

export interface Diff<F extends string> {
  /** New values of the fields that change. */
  changes: Partial<Record<F, unknown>>;
  /** Old values of the same fields (a future event's `previous_attributes`). */
  previous: Partial<Record<F, unknown>>;
}

/**
 * PATCH semantics: only the fields sent are considered, and only those whose new value differs
 * from the stored one change. `toStored` turns a sent value into the value to store (normalizing
 * by default; a merge for maps).
 */
export function diffPatch<F extends string>(
  rules: FieldRules<F>,
  current: object,
  patch: Partial<Record<F, unknown>>,
  toStored: (field: F, sent: unknown, old: unknown) => unknown = (field, sent) =>
    normalizeField(rules, field, sent),
): Diff<F> {
  const diff: Diff<F> = { changes: {}, previous: {} };
  for (const field of rules.fields) {
    if (!(field in patch)) continue;
    const old = storedValue(rules, current, field);
    const value = toStored(field, patch[field], old);
    if (isDeepStrictEqual(value, old)) continue;
    diff.changes[field] = value;
    diff.previous[field] = old;
  }
  return diff;
}

export const hasChanges = (diff: Diff<string>): boolean => Object.keys(diff.changes).length > 0;

/**
 * `{workspace_id, _id}`, unique: trivially so (ids are unique), which changes nothing on MongoDB,
 * where it serves the plain newest-first list (walked backwards) and every `{_id, workspace_id}`
 * lookup. mongo-java-server keeps only unique indexes and uses one only for a query on exactly its
 * fields, so there it is what makes those lookups a hash probe instead of a scan.
 */
export function ensureWorkspaceIdIndex<T extends Pick<RecordDoc, "_id" | "workspace_id">>(
  collection: Collection<T>,
): Promise<string> {
  return collection.createIndex({ workspace_id: 1, _id: 1 }, { unique: true, name: "workspace_id_unique" });
}

/**
 * `{workspace_id, _id, version}`, unique (trivially, as above): the filter of `updateInWorkspace`'s
 * conditional update. On MongoDB the `_id` index already finds that document, so this one only
 * costs its upkeep; on mongo-java-server, which uses an index only for a query on exactly its
 * fields, it turns every PATCH's update from a scan of the collection into a hash probe.
 */
export function ensureVersionCheckIndex<T extends RecordDoc>(collection: Collection<T>): Promise<string> {
  return collection.createIndex(
    { workspace_id: 1, _id: 1, version: 1 },
    { unique: true, name: "version_check_unique" },
  );
}

/**
 * Inserts a new record, or finds the one an earlier run of the same request made. An idempotent
 * request makes the same ids each time it runs (platform/ids.ts `withReplayableIds`), so when the
 * retry of a request whose process died mid-way finds its `_id` taken in the workspace, that
 * record (with its event still pending, or relayed already) is the first run's, and is returned
 * in place of a second one. Any other refusal is thrown.
 */
export async function insertNew<T extends { _id: string; workspace_id: string }>(
  collection: Collection<T>,
  doc: T,
): Promise<T> {
  try {
    await collection.insertOne(doc as OptionalUnlessRequiredId<T>);
    return doc;
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const made = await collection.findOne({ _id: doc._id, workspace_id: doc.workspace_id } as Filter<T>);
    if (!made) throw error;
    return made as T;
  }
}

/** One record of the workspace; another workspace's id is exactly as missing as an unknown one. */
export async function findInWorkspace<T extends { _id: string; workspace_id: string }>(
  collection: Collection<T>,
  noun: string,
  workspaceId: string,
  id: string,
): Promise<T> {
  const doc = (await collection.findOne({ _id: id, workspace_id: workspaceId } as Filter<T>)) as T | null;
  if (!doc) throw notFound(noun, id);
  return doc;
}

export async function existsInWorkspace<T extends { _id: string; workspace_id: string }>(
  collection: Collection<T>,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const filter = { _id: id, workspace_id: workspaceId } as Filter<T>;
  return (await collection.findOne(filter, { projection: { _id: 1 } })) !== null;
}

/** Which of these ids are records of the workspace. */
export async function existingIds<T extends { _id: string; workspace_id: string }>(
  collection: Collection<T>,
  workspaceId: string,
  ids: string[],
): Promise<Set<string>> {
  const filter = { _id: { $in: ids }, workspace_id: workspaceId } as Filter<T>;
  const docs = await collection.find(filter, { projection: { _id: 1 } }).toArray();
  return new Set(docs.map((doc) => doc._id as string));
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

/**
 * Read-decide-write on one record, made safe by a conditional update (optimistic concurrency):
 * the write only applies if `version` is still the one that was read, so a concurrent change
 * makes this one re-read and decide again on the new state. Nothing is locked, and nothing
 * interleaves between a decision and the state it was made on (the ticket status machine relies
 * on this). `decide` returns no `set` to write nothing. After CONTENDED_AFTER_MS of losing,
 * answers 409 concurrent_update.
 */
export async function updateInWorkspace<T extends RecordDoc, R>(
  collection: Collection<T>,
  noun: string,
  workspaceId: string,
  id: string,
  decide: (current: T) => Promise<Decision<R>>,
): Promise<R> {
  const outcome = await retry(
    CONTENDED_WRITE,
    async () => {
      const current = await findInWorkspace(collection, noun, workspaceId, id);
      const { set, unset, event, result } = await decide(current);
      if (!set) return { result };
      const update: Record<string, unknown> = {
        $set: set,
        $inc: { version: 1 },
        ...(event && pushEvent(event)),
      };
      if (unset?.length) update.$unset = Object.fromEntries(unset.map((field) => [field, ""]));
      const filter = { _id: id, workspace_id: workspaceId, version: current.version } as Filter<T>;
      const { matchedCount } = await collection.updateOne(filter, update as UpdateFilter<T>);
      // Someone else wrote first (or deleted it: the next read says 404).
      return matchedCount === 1 ? { result } : AGAIN;
    },
    { giveUp: giveUpAfter(CONTENDED_AFTER_MS, () => concurrentUpdate(noun)) },
  );
  return (outcome as { result: R }).result;
}

/** `{workspace_id, updated_at, _id}`: the incremental pull's order, read as one index range. */
export function ensurePullIndex<T extends RecordDoc>(collection: Collection<T>): Promise<string> {
  return collection.createIndex({ workspace_id: 1, updated_at: 1, _id: 1 }, { name: "workspace_pull" });
}

/** Deletes one record of the workspace that carries no events (webhook endpoints). */
export async function removeInWorkspace<T extends RecordDoc>(
  collection: Collection<T>,
  noun: string,
  workspaceId: string,
  id: string,
): Promise<void> {
  const { deletedCount } = await collection.deleteOne({ _id: id, workspace_id: workspaceId } as Filter<T>);
  if (deletedCount === 0) throw notFound(noun, id);
}

/** Deletes one record of the workspace, its pending events relayed first. */
export async function deleteInWorkspace<T extends RecordDoc>(
  relay: EventRelay,
  collection: Collection<T>,
  noun: string,
  workspaceId: string,
  id: string,
): Promise<void> {
  const deleted = await relay.deleteDrained(collection, { _id: id, workspace_id: workspaceId } as Filter<T>);
  if (!deleted) throw notFound(noun, id);
}
