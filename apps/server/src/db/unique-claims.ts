import type { Collection } from "mongodb";
import { AppError } from "../errors.js";
import { isDuplicateKey } from "./errors.js";

/** One value that must be unique, and how to name it when it is taken. */
export interface UniqueKey {
  key: string;
  code: string;
  param: string;
}

interface ClaimDoc {
  _id: string;
  owner_id: string;
  created_at: Date;
}

// A claim whose owner never appeared (its process died between claim and insert) is freed after
// this long; an honest create takes milliseconds.
const ABANDONED_AFTER_MS = 60_000;

/**
 * Uniqueness without unique secondary indexes or transactions (DESIGN.md §2): a value is owned
 * by whoever inserts the document whose `_id` is that value. Claims are taken before the record
 * is written and released when it is deleted or the value changes.
 */
export class UniqueClaims {
  constructor(
    private readonly collection: Collection<ClaimDoc>,
    private readonly noun: string,
    private readonly ownerExists: (ownerId: string) => Promise<boolean>,
  ) {}

  /**
   * Claims every key for `ownerId` or none: on conflict, releases what it took and throws 409.
   * Returns the keys this call inserted (a key the owner already held is not among them).
   */
  async claim(keys: UniqueKey[], ownerId: string): Promise<UniqueKey[]> {
    const taken: UniqueKey[] = [];
    for (const key of keys) {
      const { holder, inserted } = await this.claimOne(key.key, ownerId);
      if (holder !== ownerId) {
        await this.release(taken, ownerId);
        throw new AppError(
          409,
          key.code,
          `Another ${this.noun} already has this ${key.param.replace(".", " ")}: '${holder}'. Update that ${this.noun} instead.`,
          key.param,
        );
      }
      if (inserted) taken.push(key);
    }
    return taken;
  }

  /** Who holds the key after the attempt, and whether this attempt inserted it. */
  private async claimOne(key: string, ownerId: string): Promise<{ holder: string; inserted: boolean }> {
    for (;;) {
      try {
        await this.collection.insertOne({ _id: key, owner_id: ownerId, created_at: new Date() });
        return { holder: ownerId, inserted: true };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const holder = await this.collection.findOne({ _id: key });
      if (!holder) continue; // released in between: try again
      if (holder.owner_id === ownerId) return { holder: ownerId, inserted: false };
      const abandoned =
        Date.now() - holder.created_at.getTime() > ABANDONED_AFTER_MS &&
        !(await this.ownerExists(holder.owner_id));
      if (!abandoned) return { holder: holder.owner_id, inserted: false };
      await this.collection.deleteOne({ _id: key });
    }
  }

  /**
   * Frees the keys `ownerId` holds. One key at a time, by `_id` alone: FerretDB scans the whole
   * collection for an `$in` or a compound filter. The owner check in code is enough, since only
   * the owner releases its own claims.
   */
  async release(keys: UniqueKey[], ownerId: string): Promise<void> {
    for (const { key } of keys) {
      const holder = await this.collection.findOne({ _id: key });
      if (holder?.owner_id === ownerId) await this.collection.deleteOne({ _id: key });
    }
  }
}
