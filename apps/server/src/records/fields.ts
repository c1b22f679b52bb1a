import { isDeepStrictEqual } from "node:util";
import { DomainError } from "../platform/errors.js";

/**
 * How a resource's client-set fields are stored, shown and patched (contacts, tickets): pure
 * functions over a resource's `FieldRules`, apart from the record base (records/record.ts), which
 * finds and writes the records.
 */

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
  doc: { _id: string },
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
