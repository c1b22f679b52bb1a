import {
  MongoBulkWriteError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";

/**
 * The driver's errors, recognised here and nowhere else: the rest of the server only asks these
 * questions (errors.ts turns "unavailable" into 503).
 */

/** A unique index (or `_id`) refused a value that is taken. */
export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/**
 * The positions an unordered `insertMany` could not insert because a unique index refused them,
 * or undefined when it failed for any other reason (then nothing is known to be only that).
 */
export function duplicateKeyIndexes(error: unknown): number[] | undefined {
  if (!(error instanceof MongoBulkWriteError)) return undefined;
  const failures = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
  if (failures.length === 0 || failures.some((failure) => failure.code !== 11000)) return undefined;
  return failures.map((failure) => failure.index);
}

/** The database cannot be reached right now (network, server selection, pool cleared, closed). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    // Timeouts and a cleared pool (PoolClearedError) are network errors too.
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  );
}
