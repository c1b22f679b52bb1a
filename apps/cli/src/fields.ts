// Turning flat name=value pairs (CSV columns, `--set` flags, keys of JSON rows) into an API body,
// driven by the spec's request schema: which fields are lists, booleans, key/value maps
// (`custom_fields.<key>`, `external_ids.<system>`) or objects with parts (`address.city`).
import { UsageError } from "./errors.js";

type JsonSchema = {
  type?: string | readonly string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  oneOf?: readonly JsonSchema[];
  anyOf?: readonly JsonSchema[];
  enum?: readonly unknown[];
};

export type FieldKind = "list" | "boolean" | "map" | "object" | "scalar";

export interface FieldCatalog {
  kinds: Map<string, FieldKind>;
  /** The parts of each `object` field (`address` → line1, city, …). */
  parts: Map<string, Set<string>>;
}

const typesOf = (schema: JsonSchema): string[] =>
  schema.type === undefined ? [] : Array.isArray(schema.type) ? [...schema.type] : [schema.type as string];

/** What kind of value each top-level field of a request schema takes. */
export function catalogOf(schema: JsonSchema): FieldCatalog {
  const kinds = new Map<string, FieldKind>();
  const parts = new Map<string, Set<string>>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const variants = property.oneOf ?? [property];
    const withParts = variants.find((variant) => variant.properties);
    const types = variants.flatMap(typesOf);
    if (withParts?.properties) {
      kinds.set(name, "object");
      parts.set(name, new Set(Object.keys(withParts.properties)));
    } else if (types.includes("array")) kinds.set(name, "list");
    else if (types.includes("boolean")) kinds.set(name, "boolean");
    else if (types.includes("object")) kinds.set(name, "map");
    else kinds.set(name, "scalar");
  }
  return { kinds, parts };
}

/** Where a name lands in the body: a field, or a key/part inside one. */
export interface Target {
  field: string;
  key?: string;
}

/** `email` → {field: email}; `custom_fields.plan` → {field: custom_fields, key: plan}; else undefined. */
export function targetOf(name: string, catalog: FieldCatalog): Target | undefined {
  if (catalog.kinds.has(name)) return { field: name };
  const dot = name.indexOf(".");
  if (dot < 0) return undefined;
  const field = name.slice(0, dot);
  const key = name.slice(dot + 1);
  const kind = catalog.kinds.get(field);
  if (kind === "map" && key) return { field, key };
  if (kind === "object" && catalog.parts.get(field)?.has(key)) return { field, key };
  return undefined;
}

/** `a;b|c` → ["a", "b", "c"]: list cells split on `;` or `|`, blanks dropped. */
export const splitList = (text: string): string[] =>
  text
    .split(/[;|]/)
    .map((item) => item.trim())
    .filter((item) => item !== "");

const TRUE = new Set(["true", "yes", "y", "1"]);
const FALSE = new Set(["false", "no", "n", "0"]);

/** Text to boolean; anything else is left as text, so validation names the bad value. */
export function parseBoolean(text: string): boolean | string {
  const lower = text.trim().toLowerCase();
  if (TRUE.has(lower)) return true;
  if (FALSE.has(lower)) return false;
  return text;
}

/** A value read as text (a CSV cell, a flag) converted to what its field takes. */
export function fromText(kind: FieldKind, text: string): unknown {
  if (kind === "list") return splitList(text);
  if (kind === "boolean") return parseBoolean(text);
  return text;
}

/**
 * Puts one value into `body`. Text values (CSV, flags) are converted by the field's kind; JSON
 * values are kept, except a string given for a list or a boolean, which is read as text would be.
 */
export function assign(
  body: Record<string, unknown>,
  target: Target,
  value: unknown,
  catalog: FieldCatalog,
): void {
  const kind = catalog.kinds.get(target.field) ?? "scalar";
  if (target.key === undefined) {
    body[target.field] = typeof value === "string" && kind !== "scalar" ? fromText(kind, value) : value;
    return;
  }
  const inner = (body[target.field] ?? {}) as Record<string, unknown>;
  inner[target.key] = value;
  body[target.field] = inner;
}

export interface ColumnPlan {
  /** The name in the input (CSV header or JSON key). */
  source: string;
  /** Where it goes; undefined when `--map "Col="` says to skip it. */
  target: Target | undefined;
}

/**
 * `--map "E-Mail=email"` pairs: input name → field name (empty: ignore the column). Names are
 * matched as written; unmapped names are used as they are.
 */
export function parseRenames(pairs: readonly string[]): Map<string, string> {
  const renames = new Map<string, string>();
  for (const pair of pairs) {
    const equals = pair.lastIndexOf("=");
    if (equals <= 0)
      throw new UsageError(`--map '${pair}' must look like "Column=field" (e.g. "E-Mail=email")`);
    renames.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
  }
  return renames;
}

/** Where one input name goes, or why it cannot go anywhere. */
export function planColumn(
  source: string,
  renames: Map<string, string>,
  catalog: FieldCatalog,
): ColumnPlan | { source: string; unknown: true } {
  const name = renames.get(source) ?? source.trim();
  if (name === "") return { source, target: undefined };
  const target = targetOf(name, catalog);
  return target ? { source, target } : { source, unknown: true };
}

export function unknownColumnsMessage(names: readonly string[], catalog: FieldCatalog): string {
  const maps = [...catalog.kinds].filter(([, kind]) => kind === "map").map(([field]) => `${field}.<key>`);
  return [
    `unknown column${names.length > 1 ? "s" : ""}: ${names.map((n) => `'${n}'`).join(", ")}.`,
    `Map ${names.length > 1 ? "each" : "it"} to a field with --map "${names[0]}=<field>" (fields: ${[...catalog.kinds.keys()].join(", ")}; also ${maps.join(", ")}),`,
    `or skip it with --map "${names[0]}=".`,
  ].join("\n");
}

// The other direction, for exports: from a resource back to the columns an import reads, so a
// file written by `export` imports as it is (lists joined with `;`, which `splitList` splits).

/** The column a target is read from (`custom_fields.plan`): the inverse of `targetOf`. */
export const columnName = (target: Target): string =>
  target.key === undefined ? target.field : `${target.field}.${target.key}`;

/** What one column holds in a resource: the field, or one key or part of it (undefined when absent). */
export function valueAt(resource: Record<string, unknown>, target: Target): unknown {
  const value = resource[target.field];
  if (target.key === undefined) return value;
  if (value === null || typeof value !== "object") return undefined;
  return (value as Record<string, unknown>)[target.key];
}

/** One value as a CSV cell, as `fromText` reads it back: lists joined with `;`, no value empty. */
export function toText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(toText).join(";");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * Every column of a resource, in the catalog's field order: an object field gives one column per
 * part (`address.city`), a map field one per key that `keysOf` names (`custom_fields.plan`).
 */
export function columnsOf(catalog: FieldCatalog, keysOf: (field: string) => Iterable<string>): Target[] {
  const columns: Target[] = [];
  for (const [field, kind] of catalog.kinds) {
    if (kind === "object") for (const key of catalog.parts.get(field) ?? []) columns.push({ field, key });
    else if (kind === "map") for (const key of keysOf(field)) columns.push({ field, key });
    else columns.push({ field });
  }
  return columns;
}

/**
 * A catalog of a resource as the API returns it: the fields of its create body plus the ones the
 * API sets itself (`id` first, the time stamps last), which an export writes and an import skips.
 */
export function withApiFields(
  catalog: FieldCatalog,
  fields: { first: readonly string[]; last: readonly string[] },
): FieldCatalog {
  const kinds = new Map<string, FieldKind>();
  for (const field of fields.first) kinds.set(field, "scalar");
  for (const [field, kind] of catalog.kinds) kinds.set(field, kind);
  for (const field of fields.last) kinds.set(field, "scalar");
  return { kinds, parts: catalog.parts };
}
