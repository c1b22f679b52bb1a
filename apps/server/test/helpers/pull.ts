import { expect } from "vitest";
import { api } from "./api.js";

/**
 * A client's incremental pull (spec: *Incremental pull*), as the spec's example loop runs it:
 * applies each page to `copy` (records set, tombstones removed) and returns the cursor to keep.
 * Records every (id, updated_at) it is given in `seen`, so a test can check nothing came twice.
 */
export interface PullCopy {
  records: Map<string, { updated_at: string; [field: string]: unknown }>;
  seen: string[];
  deleted: string[];
  pages: number;
}

export const newCopy = (): PullCopy => ({ records: new Map(), seen: [], deleted: [], pages: 0 });

export async function pullInto(
  path: string,
  key: string,
  copy: PullCopy,
  from: { cursor?: string; updated_after?: string },
  limit = 10,
): Promise<string> {
  let position = from;
  for (;;) {
    const page = await api.get(path, { key, query: { ...position, limit } });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    copy.pages += 1;
    expect(page.body.data.length + page.body.deleted.length).toBeLessThanOrEqual(limit);
    for (const record of page.body.data) {
      copy.records.set(record.id, record);
      copy.seen.push(`${record.id}@${record.updated_at}`);
    }
    for (const gone of page.body.deleted) {
      copy.records.delete(gone.id);
      copy.deleted.push(gone.id);
    }
    position = { cursor: page.body.next_cursor };
    if (!page.body.has_more) return page.body.next_cursor;
  }
}
