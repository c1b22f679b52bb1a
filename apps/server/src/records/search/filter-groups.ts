import { AppError } from "../../platform/errors.js";
import { escapeRegex } from "../../platform/regex.js";
import type { Schema } from "../../spec/types.js";

/**
 * A search's `filter_groups` (an OR of AND groups, each filter a field, an operator and a value)
 * as one MongoDB filter. Each resource states its fields (`SearchField`: where a field is stored,
 * the operators it takes, how a value reads); this module knows only the operators, so contacts
 * and tickets search the same way (docs/api.md, "Searching").
 */

export type Operator = Schema<"SearchOperator">;
type Filter = Schema<"SearchFilter">;
type Group = Schema<"SearchFilterGroup">;

/** One searchable field of a resource. */
export interface SearchField {
  /** Where the field is stored (a dotted path). */
  path: string;
  /** The operators it takes. */
  operators: readonly Operator[];
  /**
   * One value as stored, from the value a filter sent: it checks the value's type and throws a
   * 400 naming `param` when it does not fit.
   */
  read: (value: unknown, param: string) => unknown;
  /** A list field (tags): `eq` means "holds", `exists` "holds any". */
  list?: boolean;
  /** Stored folded to lower case already (an email): `prefix` then needs no case-blind match. */
  folded?: boolean;
}

/** A resource's fields by name; throws the 400 for a name it does not know (naming `param`). */
export type FieldsOf = (name: string, param: string) => SearchField;

export const invalidValue = (param: string, message: string) =>
  new AppError(400, "parameter_invalid", message, { param });

/** The operators every kind of field takes (a resource picks one per field). */
export const OPERATORS = {
  text: ["eq", "neq", "in", "nin", "exists", "prefix"],
  choice: ["eq", "neq", "in", "nin", "exists"],
  ordered: ["eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "exists"],
  time: ["eq", "gt", "gte", "lt", "lte", "exists"],
  flag: ["eq", "neq"],
  id: ["eq", "neq", "in", "nin"],
  any: ["eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "exists", "prefix"],
} as const satisfies Record<string, readonly Operator[]>;

/** The whole search as one filter: a single group stays flat, the form indexes serve best. */
export function filterOfGroups(
  groups: readonly Group[] | undefined,
  fieldsOf: FieldsOf,
): Record<string, unknown> {
  if (!groups?.length) return {};
  const ands = groups.map((group, g) =>
    allOf(
      group.filters.map((filter, f) => conditionOf(filter, fieldsOf, `filter_groups[${g}].filters[${f}]`)),
    ),
  );
  return ands.length === 1 ? (ands[0] as Record<string, unknown>) : { $or: ands };
}

/** Conditions that must all hold: one flat object where their keys differ, else an `$and`. */
export function allOf(conditions: Record<string, unknown>[]): Record<string, unknown> {
  const keys = conditions.flatMap(Object.keys);
  if (new Set(keys).size === keys.length) return Object.assign({}, ...conditions);
  return { $and: conditions };
}

/** One filter as a condition on its field's stored path. */
function conditionOf(filter: Filter, fieldsOf: FieldsOf, at: string): Record<string, unknown> {
  const field = fieldsOf(filter.field, `${at}.field`);
  const { operator } = filter;
  if (!field.operators.includes(operator)) {
    throw invalidValue(
      `${at}.operator`,
      `\`${filter.field}\` takes the operators ${field.operators.map((o) => `\`${o}\``).join(", ")}; not \`${operator}\`.`,
    );
  }
  if (operator === "in" || operator === "nin") {
    if (filter.value !== undefined)
      throw invalidValue(`${at}.value`, `\`${operator}\` takes \`values\`, a list.`);
    if (filter.values === undefined)
      throw invalidValue(`${at}.values`, `\`${operator}\` needs \`values\`, a list.`);
    const values = filter.values.map((value, i) => field.read(value, `${at}.values[${i}]`));
    return { [field.path]: { [`$${operator}`]: values } };
  }
  if (filter.values !== undefined) {
    throw invalidValue(
      `${at}.values`,
      `\`${operator}\` takes one \`value\`; \`values\` is for \`in\` and \`nin\`.`,
    );
  }
  if (operator === "exists") return existsCondition(field, filter.value ?? true, `${at}.value`);
  if (filter.value === undefined) throw invalidValue(`${at}.value`, `\`${operator}\` needs a \`value\`.`);
  const value = field.read(filter.value, `${at}.value`);
  if (operator === "prefix") return prefixCondition(field, value, `${at}.value`);
  return { [field.path]: operator === "eq" ? value : { [COMPARISONS[operator]]: value } };
}

/** The MongoDB operator of each comparison (`neq` is `$ne` there). */
const COMPARISONS = { neq: "$ne", gt: "$gt", gte: "$gte", lt: "$lt", lte: "$lte" } as const;

/** Has a value (a list: at least one), or with `false` has none. */
function existsCondition(field: SearchField, value: unknown, param: string): Record<string, unknown> {
  if (typeof value !== "boolean") throw invalidValue(param, "`exists` takes `true` or `false`.");
  if (field.list) return { [`${field.path}.0`]: { $exists: value } };
  // `null` matches a missing field too; `$ne: null` neither.
  return { [field.path]: value ? { $ne: null } : null };
}

/** Text starting with the value: an anchored pattern, which an index on the field can serve. */
function prefixCondition(field: SearchField, value: unknown, param: string): Record<string, unknown> {
  if (typeof value !== "string" || value === "")
    throw invalidValue(param, "`prefix` takes text of one character or more.");
  const pattern = `^${escapeRegex(field.folded ? value.toLowerCase() : value)}`;
  return { [field.path]: field.folded ? { $regex: pattern } : { $regex: pattern, $options: "i" } };
}
