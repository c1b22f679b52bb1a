import { parseInstant } from "../../platform/http/paging.js";
import { invalidValue } from "./filter-groups.js";

/**
 * How a search filter's value reads for each kind of field (records/search/filter-groups.ts):
 * each checks the JSON type a field holds and answers the value as stored, or throws a 400
 * naming the value. A filter on text with a number would match nothing; it is refused instead,
 * so a typo in a script shows at once.
 */

export type ReadValue = (value: unknown, param: string) => unknown;

export const text: ReadValue = (value, param) => {
  if (typeof value !== "string") throw invalidValue(param, "This field holds text: send a string.");
  return value;
};

/** Text stored lower-cased (an email): compared without letter case. */
export const foldedText: ReadValue = (value, param) => (text(value, param) as string).toLowerCase();

export const flag: ReadValue = (value, param) => {
  if (typeof value !== "boolean") throw invalidValue(param, "This field is `true` or `false`.");
  return value;
};

/** A point in time: Unix seconds or an RFC 3339 string, as the lists' time bounds read them. */
export const instant: ReadValue = (value, param) => {
  if (typeof value === "number" && Number.isFinite(value)) return parseInstant(value, param);
  if (typeof value === "string" && (/^\d+$/.test(value) || /^\d{4}-\d{2}-\d{2}T/.test(value))) {
    return parseInstant(value, param);
  }
  throw invalidValue(
    param,
    "This field is a time: Unix seconds, or an RFC 3339 string such as 2026-11-29T10:00:00Z.",
  );
};

/** Any of a fixed list of values (a ticket's status). */
export const choice =
  (values: readonly string[]): ReadValue =>
  (value, param) => {
    if (typeof value !== "string" || !values.includes(value)) {
      throw invalidValue(param, `This field is one of: ${values.map((v) => JSON.stringify(v)).join(", ")}.`);
    }
    return value;
  };

/** The id of an object of one kind (`con_…`). */
export const idOf = (prefix: string): ReadValue => {
  const pattern = new RegExp(`^${prefix}_[0-9A-Za-z]+$`);
  return (value, param) => {
    if (typeof value !== "string" || !pattern.test(value)) {
      throw invalidValue(param, `This field is an id starting with \`${prefix}_\`.`);
    }
    return value;
  };
};

/** A value kept as sent, whatever its JSON type (free-form data such as custom fields). */
export const asSent: ReadValue = (value) => value;
