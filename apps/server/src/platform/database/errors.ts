import {
  MongoBulkWriteError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoUnexpectedServerResponseError,
} from "mongodb";

/**
 * The driver's errors, recognised here and nowhere else: the rest of the server only asks these
 * questions (platform/http/error-response.ts turns "unavailable" into 503).
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

// Connection-pool errors the driver does not export: a pool closed under an operation while the
// server was being reconnected, or no connection free in time. Known by name only.
const POOL_ERRORS = new Set(["MongoPoolClosedError", "MongoWaitQueueTimeoutError"]);

// Node's own socket errors, which the driver (6.x) lets through unwrapped when it writes to a
// connection the database has just closed: the first request after an outage met EPIPE as a 500.
const SOCKET_ERRORS = new Set(["EPIPE", "ECONNRESET", "ECONNREFUSED"]);

/**
 * The database cannot be reached right now (network, server selection, pool cleared or closed,
 * a reply cut short): a 503 the client may retry, never a 500. The crash trials cut the
 * database's connections under load and once saw a 500 from a driver error outside this list
 * (its class was not logged); these are the transient ones the driver can raise then.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    // Timeouts and a cleared pool (PoolClearedError) are network errors too.
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoUnexpectedServerResponseError ||
    (error instanceof Error && POOL_ERRORS.has(error.name)) ||
    (error instanceof Error && SOCKET_ERRORS.has(String((error as NodeJS.ErrnoException).code)))
  );
}
