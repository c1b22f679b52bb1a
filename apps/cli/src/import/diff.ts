// What an import row would change on an existing contact: only the fields that differ, and for
// key/value maps only the keys that differ (the API merges maps per key), so an unchanged row
// makes no write at all and a changed one touches nothing else.
import type { FieldCatalog } from "../fields.js";

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  const entries = (value: object) => Object.entries(value).filter(([, v]) => v !== undefined && v !== null);
  const left = entries(a);
  const right = new Map(entries(b));
  return left.length === right.size && left.every(([key, value]) => deepEqual(value, right.get(key)));
}

/** The PATCH body that makes `existing` agree with `wanted` on every field `wanted` names. */
export function patchFor(
  wanted: Record<string, unknown>,
  existing: Record<string, unknown>,
  catalog: FieldCatalog,
): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(wanted)) {
    const current = existing[field];
    if (catalog.kinds.get(field) === "map" && value !== null && typeof value === "object") {
      const have = (current ?? {}) as Record<string, unknown>;
      const changes: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if (item === null ? key in have && have[key] !== null : !deepEqual(have[key], item))
          changes[key] = item;
      }
      if (Object.keys(changes).length > 0) patch[field] = changes;
    } else if (!deepEqual(current ?? null, value ?? null)) {
      patch[field] = value;
    }
  }
  return patch;
}
