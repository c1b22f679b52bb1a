import type { Filter } from "mongodb";
import { AppError } from "../errors.js";
import type { QueryOf } from "../spec/types.js";

/** The list envelope of DESIGN.md §3. */
export interface ListPage<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}

/** The paging parameters every list shares, as the spec types them. */
export type PageQuery = Pick<
  QueryOf<"listContacts">,
  "limit" | "starting_after" | "created_after" | "created_before"
>;

const DEFAULT_LIMIT = 10;

/** `created_after`/`created_before` take Unix seconds or RFC 3339. */
export function parseTimestamp(value: string, param: string): Date {
  const date = /^\d+$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
  if (Number.isNaN(date.getTime()) || (!/^\d+$/.test(value) && !/(Z|[+-]\d{2}:\d{2})$/i.test(value))) {
    throw new AppError(
      400,
      "parameter_invalid",
      `\`${param}\` must be Unix seconds or an RFC 3339 time with a zone, e.g. 2026-01-31T12:00:00Z.`,
      param,
    );
  }
  return date;
}

/**
 * The parts every list shares: newest first by id (ids sort by creation time), a cursor that is
 * only a position — so it still works after its object is deleted — and exclusive time bounds.
 */
export function pageFilter<T extends { _id: string; created_at: Date }>(
  query: PageQuery,
  idPattern: (value: string) => boolean,
): { filter: Filter<T>; limit: number } {
  const filter: Record<string, unknown> = {};
  if (query.starting_after !== undefined) {
    if (!idPattern(query.starting_after)) {
      throw new AppError(
        400,
        "parameter_invalid",
        "`starting_after` must be the id of an object from a previous page.",
        "starting_after",
      );
    }
    filter._id = { $lt: query.starting_after };
  }
  const created: Record<string, Date> = {};
  if (query.created_after !== undefined) created.$gt = parseTimestamp(query.created_after, "created_after");
  if (query.created_before !== undefined)
    created.$lt = parseTimestamp(query.created_before, "created_before");
  if (Object.keys(created).length > 0) filter.created_at = created;
  return { filter: filter as Filter<T>, limit: query.limit ?? DEFAULT_LIMIT };
}

/** Fetches one more than asked to learn `has_more` without a count. */
export function toPage<Doc, Out>(docs: Doc[], limit: number, shape: (doc: Doc) => Out): ListPage<Out> {
  return { object: "list", data: docs.slice(0, limit).map(shape), has_more: docs.length > limit };
}
