// The rules of typed custom fields, pure: what a value of each type is, how a write's
// `custom_fields` is checked against the workspace's definitions, and how a filter's value is read
// by a field's type. The store (contacts/custom-field-definitions.ts) and the routes do the I/O;
// docs/decisions.md, "Typed custom fields", says why the rules are these.
import { AppError } from "../platform/errors.js";
import type { Schema } from "../spec/types.js";

export type CustomFieldType = Schema<"CustomFieldType">;

/** A definition as the rules read it (the stored one carries more: contacts/custom-field-definitions.ts). */
export interface CustomFieldRule {
  key: string;
  type: CustomFieldType;
  /** The values a `select` field takes; null for every other type. */
  options: string[] | null;
  required: boolean;
}

/** A text value's bound: the one `ContactCreate.custom_fields` puts on every string value. */
export const MAX_TEXT_LENGTH = 1000;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` naming a day the calendar has (2026-02-30 does not). */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** What each type takes, in the words an error message uses. */
const EXPECTED: Record<CustomFieldType, string> = {
  text: `a string of at most ${MAX_TEXT_LENGTH} characters`,
  number: "a number",
  boolean: "`true` or `false`",
  date: "a calendar date `YYYY-MM-DD`",
  select: "one of its options",
};

/** Whether a JSON value is one of the field's type. */
function fits(rule: CustomFieldRule, value: unknown): boolean {
  switch (rule.type) {
    case "text":
      return typeof value === "string" && value.length <= MAX_TEXT_LENGTH;
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "date":
      return typeof value === "string" && isCalendarDate(value);
    case "select":
      return typeof value === "string" && (rule.options ?? []).includes(value);
  }
}

/** The 400 of a value the field's type does not take, naming the field and the type. */
function wrongValue(rule: CustomFieldRule, param: string): AppError {
  const options = rule.type === "select" ? ` (${(rule.options ?? []).map((o) => `'${o}'`).join(", ")})` : "";
  return new AppError(
    400,
    "parameter_invalid",
    `\`${param}\` must be ${EXPECTED[rule.type]}${options}: the workspace defines it as a \`${rule.type}\` custom field.`,
    { param },
  );
}

/** Throws the 400 of `param` unless `value` is one of the field's type. */
export function checkValue(rule: CustomFieldRule, value: unknown, param = `custom_fields.${rule.key}`): void {
  if (!fits(rule, value)) throw wrongValue(rule, param);
}

/** A number as a query string writes it: `10`, `-2.5`, `1e3`; not `0x10`, `""` or ` 1`. */
const NUMBER_TEXT = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * One filter value for a field, read by its type: a query string's text (`"10"` → 10 for a number
 * field, `"true"` → true for a boolean) or a JSON value already of the type. Throws `400
 * parameter_invalid` naming `param` when the type cannot read it. The list filter
 * (`custom_fields.<key>=`) and the contact search read their values with it.
 */
export function readFilterValue(
  rule: CustomFieldRule,
  value: unknown,
  param: string,
): string | number | boolean {
  let read = value;
  if (typeof value === "string" && rule.type === "number" && NUMBER_TEXT.test(value)) read = Number(value);
  if (typeof value === "string" && rule.type === "boolean" && (value === "true" || value === "false"))
    read = value === "true";
  checkValue(rule, read, param);
  return read as string | number | boolean;
}

/** What a write does with its `custom_fields`: a create (required keys must be there) or an update. */
export type WriteKind = "create" | "update";

/**
 * Checks a write's `custom_fields` against the workspace's definitions: each defined key's value
 * is of its type (`null` clears, but not a required key on update), a create carries every
 * required key. Throws the first key's 400; answers the keys with a value that no definition
 * names (what the workspace's `undefined_custom_fields` keeps or refuses).
 */
export function checkCustomFields(
  definitions: ReadonlyMap<string, CustomFieldRule>,
  values: Record<string, unknown> | null | undefined,
  kind: WriteKind,
): string[] {
  const undefinedKeys: string[] = [];
  for (const [key, value] of Object.entries(values ?? {})) {
    const rule = definitions.get(key);
    if (!rule) {
      if (value !== null) undefinedKeys.push(key);
      continue;
    }
    if (value !== null) checkValue(rule, value);
    else if (rule.required && kind === "update") {
      const param = `custom_fields.${key}`;
      throw new AppError(
        400,
        "parameter_invalid",
        `\`${param}\` is a required custom field: it cannot be cleared.`,
        {
          param,
        },
      );
    }
  }
  if (kind === "create") {
    for (const rule of definitions.values()) {
      if (rule.required && (values?.[rule.key] ?? null) === null) {
        const param = `custom_fields.${rule.key}`;
        throw new AppError(
          400,
          "parameter_missing",
          `\`${param}\` is required: the workspace defines it as a required custom field.`,
          { param },
        );
      }
    }
  }
  return undefinedKeys;
}

/** The 400 of a key no definition names, in a workspace whose `undefined_custom_fields` is `refuse`. */
export function undefinedKeyError(key: string): AppError {
  const param = `custom_fields.${key}`;
  return new AppError(
    400,
    "parameter_invalid",
    `\`${param}\` is not a custom field of this workspace: define it first (createCustomFieldDefinition); the workspace refuses undefined keys.`,
    { param },
  );
}

/** The prefix of a list's custom field filters: `custom_fields.<key>=<value>`. */
export const FILTER_PREFIX = "custom_fields.";

/**
 * A list query's `custom_fields.<key>` parameters as a database filter (`{"custom_fields.seats":
 * 10}`; several AND), each read by its definition. A key the workspace has not defined is 400:
 * an undefined key has no type to read the value by.
 */
export function customFieldFilter(
  definitions: ReadonlyMap<string, CustomFieldRule>,
  query: Record<string, unknown>,
): Record<string, string | number | boolean> {
  const filter: Record<string, string | number | boolean> = {};
  for (const [param, value] of Object.entries(query)) {
    if (!param.startsWith(FILTER_PREFIX)) continue;
    const rule = definitions.get(param.slice(FILTER_PREFIX.length));
    if (!rule) {
      throw new AppError(
        400,
        "parameter_invalid",
        `\`${param}\` filters on a custom field this workspace has not defined; define it first (createCustomFieldDefinition).`,
        { param },
      );
    }
    filter[param] = readFilterValue(rule, value, param);
  }
  return filter;
}
