import type { Collection, Document, OptionalUnlessRequiredId } from "mongodb";
import { duplicateKeyIndexes } from "./errors.js";

/**
 * Inserts many documents in one round trip, each unless a unique index already holds it (an
 * unordered `insertMany`: the others go in regardless). Returns, per document, whether it was
 * inserted now (false: it was stored already). Events, deliveries and delivery attempts are
 * stored through this (each store's `insertOnce`): a repeat is a no-op.
 */
export async function insertManyOnce<T extends Document>(
  collection: Collection<T>,
  docs: OptionalUnlessRequiredId<T>[],
): Promise<boolean[]> {
  try {
    await collection.insertMany(docs, { ordered: false });
    return docs.map(() => true);
  } catch (error) {
    const duplicates = duplicateKeyIndexes(error);
    if (!duplicates) throw error;
    return docs.map((_, i) => !duplicates.includes(i));
  }
}
