import { parameterDefaults } from "@deskline/spec/values";
import type { QueryOf } from "../../spec/types.js";
import type { Page, PullWindow } from "../database/lists.js";
import { decodeCursor } from "../database/pull-cursor.js";
import { AppError } from "../errors.js";

/** The list envelope (docs/design.md, API conventions). */
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

/** The parameters of an incremental pull, on the lists that offer one. */
export type PullQuery = PageQuery & Pick<QueryOf<"listContacts">, "updated_after" | "cursor">;

/** A page's size when `limit` is not sent: the spec's `Limit` parameter default. */
const DEFAULT_LIMIT = parameterDefaults.Limit;

/**
 * `created_after`/`created_before`/`updated_after`: Unix seconds or RFC 3339 with a zone, exactly
 * as the spec's pattern has already checked (calendar included), so every value parses.
 */
export function parseTimestamp(value: string, param: string): Date {
  const date = /^\d+$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new AppError(400, "parameter_invalid", `\`${param}\` is not a time this server can read.`, {
      param,
    });
  }
  return date;
}

/** A body's point in time (`Instant` in the spec): Unix seconds, or an RFC 3339 string. */
export function parseInstant(value: number | string, param: string): Date {
  return typeof value === "number" ? new Date(value * 1000) : parseTimestamp(value, param);
}

/**
 * The parts every list shares, as plain values for the database layer (records/record.ts turns them
 * into a query): the page size, a cursor that is only a position — so it still works after its
 * object is deleted — and exclusive time bounds. `starting_after` was checked against the list's
 * id pattern by the spec's validator.
 */
export function parsePage(query: PageQuery): Page {
  const page: Page = { limit: query.limit ?? DEFAULT_LIMIT };
  if (query.starting_after !== undefined) page.startingAfter = query.starting_after;
  if (query.created_after !== undefined)
    page.createdAfter = parseTimestamp(query.created_after, "created_after");
  if (query.created_before !== undefined)
    page.createdBefore = parseTimestamp(query.created_before, "created_before");
  return page;
}

/** Fetches one more than asked to learn `has_more` without a count. */
export function toPage<Doc, Out>(docs: Doc[], limit: number, shape: (doc: Doc) => Out): ListPage<Out> {
  return { object: "list", data: docs.slice(0, limit).map(shape), has_more: docs.length > limit };
}

/**
 * The window of an incremental pull (spec: *Incremental pull*), or undefined for a plain
 * newest-first list: `updated_after` starts one, `cursor` continues one.
 */
export function parsePull(query: PullQuery): PullWindow | undefined {
  if (query.updated_after === undefined && query.cursor === undefined) return undefined;
  if (query.updated_after !== undefined && query.cursor !== undefined) {
    throw new AppError(
      400,
      "parameter_invalid",
      "Pass either `updated_after` (to start a pull) or `cursor` (to continue one), not both.",
      { param: "cursor" },
    );
  }
  if (query.starting_after !== undefined) {
    throw new AppError(
      400,
      "parameter_invalid",
      "`starting_after` pages the newest-first list; a pull continues with `cursor` (its `next_cursor`).",
      { param: "starting_after" },
    );
  }
  const { createdAfter, createdBefore, limit } = parsePage(query);
  const after =
    query.cursor !== undefined
      ? decodeCursor(query.cursor)
      : { updatedAt: parseTimestamp(query.updated_after as string, "updated_after") };
  if (!after) {
    throw new AppError(
      400,
      "parameter_invalid",
      "`cursor` must be a `next_cursor` from a previous page of a pull.",
      { param: "cursor" },
    );
  }
  return { limit, after, createdAfter, createdBefore };
}
