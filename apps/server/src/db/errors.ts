import {
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
