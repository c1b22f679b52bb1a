// `--where` conditions as a search's `filter_groups` (docs/cli.md, "Search"): each condition is
// `field=value`, `field!=value`, `field>=value` (and `>`, `<`, `<=`) or `field <operator> value`
// with one of the API's operators (`custom_fields.plan in pro,team`, `email exists`). Conditions
// AND within a group; `--or-where` starts the next group. Values are typed as the field holds
// them: booleans for the flags, numbers and booleans in custom fields unless quoted.
import type { SearchFilter } from "@deskline/sdk";
import { UsageError } from "../errors.js";
import { parseBoolean } from "../fields.js";

type Operator = SearchFilter<string>["operator"];
type Value = string | number | boolean;

/** One `--where` or `--or-where`, in the order given. */
export interface Condition {
  text: string;
  /** `--or-where`: this condition starts a new group. */
  startsGroup: boolean;
}

const WORDS: readonly Operator[] = ["eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "exists", "prefix"];
const SYMBOLS: [string, Operator][] = [
  ["!=", "neq"],
  [">=", "gte"],
  ["<=", "lte"],
  ["=", "eq"],
  [">", "gt"],
  ["<", "lt"],
];

/** How the fields of one resource read their values: which are flags (`do_not_contact`). */
export interface WhereFields {
  flags: ReadonlySet<string>;
}

/** The conditions as groups of filters, ready for `search({ filter_groups })`. */
export function filterGroupsOf(conditions: readonly Condition[], fields: WhereFields) {
  const groups: { filters: SearchFilter<string>[] }[] = [];
  for (const condition of conditions) {
    if (condition.startsGroup || groups.length === 0) groups.push({ filters: [] });
    groups.at(-1)?.filters.push(filterOf(condition.text, fields));
  }
  return groups;
}

/** One condition as a filter; a condition that does not read is a usage error saying how to write one. */
export function filterOf(text: string, fields: WhereFields): SearchFilter<string> {
  const words = /^\s*([\w.-]+)\s+([a-z]+)(?:\s+(.*?))?\s*$/.exec(text);
  if (words && WORDS.includes(words[2] as Operator)) {
    const [, field = "", operator, rest] = words;
    return withValue(field, operator as Operator, rest, fields);
  }
  for (const [symbol, operator] of SYMBOLS) {
    const at = text.indexOf(symbol);
    const field = text.slice(0, at).trim();
    if (at > 0 && /^[\w.-]+$/.test(field))
      return withValue(field, operator, text.slice(at + symbol.length), fields);
  }
  throw new UsageError(
    `--where '${text}' does not read: write field=value, field!=value, field>=value, or field <operator> value ` +
      `with an operator of ${WORDS.join(", ")} (e.g. 'custom_fields.plan in pro,team').`,
  );
}

function withValue(field: string, operator: Operator, rest: string | undefined, fields: WhereFields) {
  if (operator === "exists")
    return { field, operator, value: rest === undefined ? true : parseBoolean(rest) };
  if (rest === undefined || rest.trim() === "") {
    throw new UsageError(`--where '${field} ${operator}' needs a value after the operator.`);
  }
  if (operator === "in" || operator === "nin") {
    const values = rest.split(",").map((item) => typedValue(field, item.trim(), fields));
    return { field, operator, values };
  }
  return { field, operator, value: typedValue(field, rest.trim(), fields) };
}

/** A value as the field holds it; `"quoted"` keeps digits as text (`custom_fields.zip="01234"`). */
function typedValue(field: string, text: string, fields: WhereFields): Value {
  const quoted = /^"(.*)"$/.exec(text);
  if (quoted) return quoted[1] as string;
  if (fields.flags.has(field)) return parseBoolean(text);
  if (field.startsWith("custom_fields.")) {
    if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    if (text === "true" || text === "false") return text === "true";
  }
  return text;
}
