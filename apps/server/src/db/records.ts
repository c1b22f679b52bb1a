import { isDeepStrictEqual } from "node:util";
import type { Collection, Filter } from "mongodb";
import { AppError } from "../errors.js";

/**
 * What every public resource shares (contacts, tickets…): how its client-set fields are stored,
 * shown and patched, and how one record of a workspace is found, listed and updated safely.
 * Each collection module keeps its own rules and queries; this is only the common ground.
 */

/** The columns every workspace-owned record stores besides its own fields. */
export interface RecordDoc {
  _id: string;
  workspace_id: string;
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
      throw new AppError(400, "parameter_invalid", `\`${field}\` is not a valid RFC 3339 time.`, field);
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

export function notFound(noun: string, id: string): AppError {
  return new AppError(404, "resource_missing", `No such ${noun}: '${id}'.`, "id");
}

// Single-record queries filter on `_id` alone and check the workspace in code: FerretDB's SQLite
// backend looks up `{_id}` by key but scans the whole collection for any other filter, even
// `{_id, workspace_id}` (about 100 ms at 3,000 documents). Ids are globally unique, so this is
// exactly as safe on MongoDB, where it costs nothing.

/** One record of the workspace; another workspace's id is exactly as missing as an unknown one. */
export async function findInWorkspace<T extends RecordDoc>(
  collection: Collection<T>,
  noun: string,
  workspaceId: string,
  id: string,
): Promise<T> {
  const doc = (await collection.findOne({ _id: id } as Filter<T>)) as T | null;
  if (!doc || doc.workspace_id !== workspaceId) throw notFound(noun, id);
  return doc;
}

export async function existsInWorkspace<T extends { _id: string; workspace_id: string }>(
  collection: Collection<T>,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const doc = await collection.findOne({ _id: id } as Filter<T>, { projection: { workspace_id: 1 } });
  return doc?.workspace_id === workspaceId;
}

/**
 * Writes a PATCH's changes to a record found with `findInWorkspace`. Callers hold the record's
 * lock (db/record-locks.ts), so no other PATCH interleaves between their read and this write.
 */
export async function updateById<T extends RecordDoc>(
  collection: Collection<T>,
  noun: string,
  id: string,
  set: Partial<T>,
): Promise<void> {
  const { matchedCount } = await collection.updateOne({ _id: id } as Filter<T>, { $set: set } as never);
  if (matchedCount === 0) throw notFound(noun, id); // deleted since it was read
}

/** A list query: newest first (ids sort by creation time), one more than asked for `has_more`. */
export function newestFirst<T extends RecordDoc>(
  collection: Collection<T>,
  workspaceId: string,
  clauses: Filter<T>[],
  limit: number,
): Promise<T[]> {
  return collection
    .find({ $and: [{ workspace_id: workspaceId } as Filter<T>, ...clauses] } as Filter<T>)
    .sort({ _id: -1 })
    .limit(limit + 1)
    .toArray() as Promise<T[]>;
}

/** Deletes one record of the workspace and returns it (to release what it held). */
export async function deleteInWorkspace<T extends RecordDoc>(
  collection: Collection<T>,
  noun: string,
  workspaceId: string,
  id: string,
): Promise<T> {
  const doc = await findInWorkspace(collection, noun, workspaceId, id);
  const { deletedCount } = await collection.deleteOne({ _id: id } as Filter<T>);
  if (deletedCount === 0) throw notFound(noun, id); // a concurrent delete won
  return doc;
}

/** A record stayed locked by other requests for too long (db/record-locks.ts). */
export function concurrentUpdate(noun: string): AppError {
  return new AppError(409, "concurrent_update", `The ${noun} is being changed by other requests; retry.`);
}
