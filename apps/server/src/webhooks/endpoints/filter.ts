import { DomainError } from "../../platform/errors.js";

/**
 * An endpoint's content filter (docs/webhooks.md, "Content filters"; docs/decisions.md, "Content
 * filters"): a JSON object matched against the event's body (`type`, `data`, `previous_attributes`
 * …) as it is delivered, in the fan-out, so a filter costs no database round trip. The language
 * is Outpost's: an object matches when each of its keys does; a key names a field, and its value
 * is a plain value (equal; for a list field, an element equal), a nested object (matched against
 * the field's object) or an object of operators; `$and`, `$or` (lists of filters) and `$not` (a
 * filter) combine, at the top or on a field. A field that is missing matches only
 * `$exists: false`, `$neq` and `$nin`.
 */

export type EventFilter = { [key: string]: unknown };

const FIELD_OPERATORS = [
  "$eq",
  "$neq",
  "$in",
  "$nin",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
  "$exists",
  "$startsWith",
] as const;
type FieldOperator = (typeof FIELD_OPERATORS)[number];
const LOGICAL = ["$and", "$or", "$not"] as const;

/** Bounds of a filter: nesting, keys and list items in all, values per `$in`, its JSON's size. */
export const FILTER_LIMITS = { depth: 8, nodes: 256, listValues: 100, bytes: 8192 } as const;

const isObject = (value: unknown): value is EventFilter =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isFieldOperator = (key: string): key is FieldOperator =>
  (FIELD_OPERATORS as readonly string[]).includes(key);
const isLogical = (key: string): boolean => (LOGICAL as readonly string[]).includes(key);

/** Whether `value` (the event's body, parsed, or a field of it) passes the filter. */
export function matchesFilter(filter: EventFilter, value: unknown): boolean {
  return Object.entries(filter).every(([key, operand]) => matchKey(key, operand, value));
}

function matchKey(key: string, operand: unknown, value: unknown): boolean {
  if (key === "$and") return (operand as EventFilter[]).every((part) => matchesFilter(part, value));
  if (key === "$or") return (operand as EventFilter[]).some((part) => matchesFilter(part, value));
  if (key === "$not") return !matchesFilter(operand as EventFilter, value);
  if (isFieldOperator(key)) return applyOperator(key, operand, value);
  const field = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
  return isObject(operand) ? matchesFilter(operand, field) : equalsOrContains(field, operand);
}

function applyOperator(op: FieldOperator, arg: unknown, field: unknown): boolean {
  switch (op) {
    case "$eq":
      return equalsOrContains(field, arg);
    case "$neq":
      return !equalsOrContains(field, arg);
    case "$in":
      return (arg as unknown[]).some((one) => equalsOrContains(field, one));
    case "$nin":
      return !(arg as unknown[]).some((one) => equalsOrContains(field, one));
    case "$exists":
      return (field !== undefined) === arg;
    case "$startsWith":
      return typeof field === "string" && field.startsWith(arg as string);
    default:
      return compare(op, field, arg);
  }
}

/** `$gt` `$gte` `$lt` `$lte`: numbers with numbers, strings with strings (ISO times sort as text). */
function compare(op: "$gt" | "$gte" | "$lt" | "$lte", field: unknown, arg: unknown): boolean {
  if (typeof field !== typeof arg || (typeof field !== "number" && typeof field !== "string")) return false;
  const [a, b] = [field as number | string, arg as number | string];
  if (op === "$gt") return a > b;
  if (op === "$gte") return a >= b;
  if (op === "$lt") return a < b;
  return a <= b;
}

/** Equal as JSON values; a list field also matches a value one of its elements equals. */
function equalsOrContains(field: unknown, value: unknown): boolean {
  if (deepEqual(field, value)) return true;
  return Array.isArray(field) && !Array.isArray(value) && field.some((one) => deepEqual(one, value));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) =>
    deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

/**
 * Checks a filter as written to an endpoint: a JSON object of known operators with operands of
 * the right kind, within FILTER_LIMITS. Throws 400 `parameter_invalid` with `param` pointing into
 * it (`filter.data.priority.$in`).
 */
export function checkFilter(filter: unknown, param = "filter"): EventFilter {
  if (!isObject(filter)) throw invalid(param, "must be a JSON object (or null for no filter)");
  if (JSON.stringify(filter).length > FILTER_LIMITS.bytes) {
    throw invalid(param, `is larger than ${FILTER_LIMITS.bytes} bytes as JSON`);
  }
  const budget = { nodes: 0 };
  checkObject(filter, param, 1, budget);
  return filter;
}

interface Budget {
  nodes: number;
}

function checkObject(filter: EventFilter, path: string, depth: number, budget: Budget): void {
  if (depth > FILTER_LIMITS.depth) throw invalid(path, `nests deeper than ${FILTER_LIMITS.depth} levels`);
  const keys = Object.keys(filter);
  if (keys.length === 0)
    throw invalid(path, "is an empty object: give a value, a nested filter or operators");
  budget.nodes += keys.length;
  if (budget.nodes > FILTER_LIMITS.nodes) throw invalid(path, `has more than ${FILTER_LIMITS.nodes} keys`);
  const fields = keys.some((key) => !key.startsWith("$"));
  for (const key of keys) {
    const at = `${path}.${key}`;
    const operand = filter[key];
    if (!key.startsWith("$")) {
      if (isObject(operand)) checkObject(operand, at, depth + 1, budget);
    } else if (isLogical(key)) checkLogical(key, operand, at, depth, budget);
    else if (!isFieldOperator(key)) {
      throw invalid(at, `is not an operator: use one of ${[...FIELD_OPERATORS, ...LOGICAL].join(", ")}`);
    } else if (depth === 1) throw invalid(at, `applies to a field: write {"<field>": {"${key}": …}}`);
    else if (fields) throw invalid(at, "is beside field names: nest the fields in their own object");
    else checkOperand(key, operand, at);
  }
}

function checkLogical(key: string, operand: unknown, path: string, depth: number, budget: Budget): void {
  if (key === "$not") {
    if (!isObject(operand)) throw invalid(path, "takes a filter (a JSON object)");
    checkObject(operand, path, depth + 1, budget);
    return;
  }
  if (!Array.isArray(operand) || operand.length === 0 || !operand.every(isObject)) {
    throw invalid(path, "takes a non-empty list of filters (JSON objects)");
  }
  operand.forEach((part, index) => {
    checkObject(part as EventFilter, `${path}.${index}`, depth + 1, budget);
  });
}

function checkOperand(op: FieldOperator, operand: unknown, path: string): void {
  const scalar = (value: unknown) => value === null || ["string", "number", "boolean"].includes(typeof value);
  if (op === "$in" || op === "$nin") {
    if (!Array.isArray(operand) || operand.length === 0 || operand.length > FILTER_LIMITS.listValues) {
      throw invalid(path, `takes a list of 1 to ${FILTER_LIMITS.listValues} values`);
    }
    if (!operand.every(scalar)) throw invalid(path, "takes strings, numbers, booleans or null");
  } else if (op === "$exists") {
    if (typeof operand !== "boolean") throw invalid(path, "takes true or false");
  } else if (op === "$startsWith") {
    if (typeof operand !== "string" || operand === "") throw invalid(path, "takes a non-empty string");
  } else if (op === "$eq" || op === "$neq") {
    if (!scalar(operand)) throw invalid(path, "takes a string, a number, a boolean or null");
  } else if (typeof operand !== "number" && typeof operand !== "string") {
    throw invalid(path, "takes a number or a string");
  }
}

const invalid = (param: string, problem: string): DomainError =>
  new DomainError("invalid", "parameter_invalid", `The webhook endpoint's ${param} ${problem}.`, {
    param,
  });

/** Events' bodies parsed once, whichever endpoints' filters read them (a batch holds each event once). */
const bodies = new WeakMap<object, unknown>();

/** Whether the endpoint takes the event by its filter: it has none, or the event's body passes. */
export function passesFilter(
  endpoint: { filter?: EventFilter | null },
  event: { payload?: string },
): boolean {
  if (!endpoint.filter) return true;
  if (event.payload === undefined) throw new Error("a content filter needs the event's payload");
  let body = bodies.get(event);
  if (body === undefined) {
    body = JSON.parse(event.payload);
    bodies.set(event, body);
  }
  return matchesFilter(endpoint.filter, body);
}
