import { LRUCache } from "lru-cache";

/**
 * A per-process cache of one database read per key, for a short time: concurrent readers of a key
 * share one query, and a change made through this process drops the key at once (`drop`), while
 * other processes see it once their copy is older than `ttlMs`. What API keys and custom field
 * definitions are read through (docs/decisions.md, "Server" and "Typed custom fields").
 */
export class CachedReads<V> {
  /** Boxed, so that a read answering undefined or null is kept too. */
  private readonly cache: LRUCache<string, { value: V }> | undefined;

  /** `ttlMs` 0: no cache, every call reads. */
  constructor(
    private readonly read: (key: string) => Promise<V>,
    options: { ttlMs: number; max: number },
  ) {
    if (options.ttlMs > 0) {
      this.cache = new LRUCache<string, { value: V }>({
        max: options.max,
        ttl: options.ttlMs,
        fetchMethod: async (key) => ({ value: await this.read(key) }),
      });
    }
  }

  async get(key: string): Promise<V> {
    if (!this.cache) return this.read(key);
    try {
      const box = await this.cache.fetch(key);
      return box ? box.value : this.read(key);
    } catch {
      // A `drop` while the read was in flight aborts it, and lru-cache then rejects its callers:
      // they read anew, and see the change that dropped it. A failed read fails again here.
      return this.read(key);
    }
  }

  /** Forgets `key` after a change made through this process. */
  drop(key: string): void {
    this.cache?.delete(key);
  }
}
