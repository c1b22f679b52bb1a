import type { Collection, Filter, Sort } from "mongodb";
import { AppError } from "../../platform/errors.js";
import type { Schema } from "../../spec/types.js";
import { allOf } from "./filter-groups.js";

/**
 * A page of a search in its `sort` order, and the cursor that continues it. `created_at` is read
 * as `_id` (ids sort by creation time), the order every list index ends in; `updated_at` as
 * (`updated_at`, `_id`), the order of the incremental pull's index. The cursor is the last
 * result's position in that order, opaque (base64url) so that its form may change within v1.
 */

type SortBody = Schema<"SearchSort">;
export interface SearchSort {
  field: SortBody["field"];
  direction: NonNullable<SortBody["direction"]>;
}

/** Where a page continues: after this id, and for `updated_at`, at or after this instant. */
interface Position {
  id: string;
  updatedAt?: Date;
}

export interface SearchWindow {
  sort: SearchSort;
  limit: number;
  after?: Position;
}

const DEFAULT_SORT: SearchSort = { field: "created_at", direction: "desc" };
const VERSION = "s1";

/** The window a search body asks for: its sort (newest first unless told), limit and cursor. */
export function searchWindow(
  body: { sort?: SortBody; limit?: number; cursor?: string },
  defaultLimit: number,
): SearchWindow {
  const sort = body.sort
    ? { field: body.sort.field, direction: body.sort.direction ?? "desc" }
    : DEFAULT_SORT;
  const window: SearchWindow = { sort, limit: body.limit ?? defaultLimit };
  if (body.cursor !== undefined) window.after = decodeSearchCursor(body.cursor, sort);
  return window;
}

export function encodeSearchCursor(sort: SearchSort, doc: { _id: string; updated_at: Date }): string {
  const instant = sort.field === "updated_at" ? String(doc.updated_at.getTime()) : "";
  const text = [VERSION, sort.field, sort.direction, instant, doc._id].join(".");
  return Buffer.from(text, "utf8").toString("base64url");
}

function decodeSearchCursor(cursor: string, sort: SearchSort): Position {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^s1\.(created_at|updated_at)\.(asc|desc)\.(\d{0,15})\.([a-z]+_[0-9A-Za-z]+)$/.exec(text);
  if (!match) {
    throw new AppError(
      400,
      "parameter_invalid",
      "`cursor` is not a search cursor: send a `next_cursor` as it came.",
      {
        param: "cursor",
      },
    );
  }
  const [, field = "", direction = "", instant = "", id = ""] = match;
  if (field !== sort.field || direction !== sort.direction || (field === "updated_at") !== (instant !== "")) {
    throw new AppError(
      400,
      "parameter_invalid",
      `This cursor continues a search sorted by \`${field}\` \`${direction}\`: send that \`sort\` with it, or start again without \`cursor\`.`,
      { param: "cursor" },
    );
  }
  return instant ? { id, updatedAt: new Date(Number(instant)) } : { id };
}

/**
 * One page: the workspace's documents matching `filter`, in the window's order after its
 * position, one more than asked so the caller knows `has_more`.
 */
export function searchPage<T extends { _id: string; workspace_id: string; updated_at: Date }>(
  collection: Collection<T>,
  workspaceId: string,
  filter: Record<string, unknown>,
  window: SearchWindow,
): Promise<T[]> {
  const { field, direction } = window.sort;
  const order = direction === "asc" ? 1 : -1;
  const beyond = direction === "asc" ? "$gt" : "$lt";
  const conditions = window.after ? [filter, afterCondition(window.after, beyond)] : [filter];
  // The workspace stays at the top, where MongoDB's planner and the fallback's index look for it.
  const query = { ...allOf(conditions), workspace_id: workspaceId };
  const sort: Sort = field === "updated_at" ? { updated_at: order, _id: order } : { _id: order };
  return collection
    .find(query as Filter<T>)
    .sort(sort)
    .limit(window.limit + 1)
    .toArray() as Promise<T[]>;
}

/** Strictly beyond the position: by id alone, or by (`updated_at`, id). */
function afterCondition(after: Position, beyond: "$gt" | "$lt"): Record<string, unknown> {
  if (!after.updatedAt) return { _id: { [beyond]: after.id } };
  return {
    $or: [
      { updated_at: { [beyond]: after.updatedAt } },
      { updated_at: after.updatedAt, _id: { [beyond]: after.id } },
    ],
  };
}

/** The answer: a page, and the cursor after its last result while more follow. */
export function toSearchResult<Doc extends { _id: string; updated_at: Date }, Out>(
  docs: Doc[],
  window: SearchWindow,
  shape: (doc: Doc) => Out,
): { object: "list"; data: Out[]; has_more: boolean; next_cursor: string | null } {
  const page = docs.slice(0, window.limit);
  const last = page.at(-1);
  const hasMore = docs.length > window.limit;
  return {
    object: "list",
    data: page.map(shape),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeSearchCursor(window.sort, last) : null,
  };
}
