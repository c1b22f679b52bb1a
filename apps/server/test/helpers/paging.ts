import { expect } from "vitest";
import { api } from "./api.js";

type Query = Record<string, string | number | boolean | string[]>;

/**
 * Follows `starting_after` from the first page to the last and returns every id seen, checking
 * on the way that each page but the last is full.
 */
export async function walkPages(path: string, key: string, query: Query = {}): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await api.get(path, { key, query: cursor ? { ...query, starting_after: cursor } : query });
    expect(page.status).toBe(200);
    const ids: string[] = page.body.data.map((item: { id: string }) => item.id);
    seen.push(...ids);
    if (!page.body.has_more) return seen;
    expect(ids).toHaveLength(Number(query.limit ?? 10));
    cursor = ids.at(-1);
  }
}
