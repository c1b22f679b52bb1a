import type { Collection, IndexDescription } from "mongodb";
import { isDuplicateKey } from "../platform/database/errors.js";
import { DomainError, type ErrorCode } from "../platform/errors.js";

/**
 * Values unique per workspace (a contact's email, each of its external ids), enforced by one
 * unique index over an array field: each record lists its keys in `unique_keys`, and the index
 * refuses a key that another record lists. A record with no keys leaves the field out (the index
 * is sparse), so records without an email do not collide on "none".
 */

/** One value that must be unique, and how to name it when it is taken. */
export interface UniqueKey {
  /** Workspace, kind and value, JSON-encoded so no two different triples can read alike. */
  key: string;
  code: ErrorCode;
  param: string;
}

export interface WithUniqueKeys {
  _id: string;
  unique_keys?: string[];
}

export const uniqueKey = (
  workspaceId: string,
  parts: string[],
  code: ErrorCode,
  param: string,
): UniqueKey => ({
  key: JSON.stringify([workspaceId, ...parts]),
  code,
  param,
});

/** The index that holds the keys unique. Sparse, not partial: mongo-java-server treats a partial unique index as a full one. */
export const UNIQUE_KEYS_INDEX: IndexDescription = {
  key: { unique_keys: 1 },
  unique: true,
  sparse: true,
  name: "unique_keys",
};

// A write refused for a key whose holder is gone by the time we look is simply tried again; a few
// rounds cover any realistic churn, and then the driver's error is the honest answer.
const ATTEMPTS = 5;

/**
 * Runs a write that stores `keys()` for record `selfId`; when the unique index refuses it,
 * answers 409 naming the record that holds the key. `keys` is read after the write fails, so an
 * update can decide its keys inside the write. Of the collection it needs only `findOne`, over the
 * fields every record with unique keys has, so no filter of the record's own type is cast.
 */
export async function writeUnique<R>(
  collection: Pick<Collection<WithUniqueKeys>, "findOne">,
  noun: string,
  selfId: string,
  keys: () => UniqueKey[],
  write: () => Promise<R>,
): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isDuplicateKey(error) || attempt === ATTEMPTS) throw error;
      const conflict = await takenBy(collection, noun, selfId, keys());
      if (conflict) throw conflict;
    }
  }
}

async function takenBy(
  collection: Pick<Collection<WithUniqueKeys>, "findOne">,
  noun: string,
  selfId: string,
  keys: UniqueKey[],
): Promise<DomainError | undefined> {
  const wanted = keys.map((k) => k.key);
  const holder = await collection.findOne(
    { unique_keys: { $in: wanted }, _id: { $ne: selfId } },
    { projection: { unique_keys: 1 } },
  );
  const key = keys.find((k) => holder?.unique_keys?.includes(k.key));
  if (!holder || !key) return undefined;
  return new DomainError(
    "conflict",
    key.code,
    `Another ${noun} already has this ${key.param.replace(".", " ")}: '${holder._id}'. Update that ${noun} instead.`,
    // `holder_id` a field, so a client finds the holder without parsing the message.
    { param: key.param, details: { holder_id: holder._id } },
  );
}
