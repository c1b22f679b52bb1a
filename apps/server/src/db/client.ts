import { type Db, MongoClient } from "mongodb";
import type { Logger } from "../logger.js";

/**
 * One MongoClient for the process. The driver reconnects by itself; short server-selection
 * timeouts make an unreachable database answer 503 quickly instead of hanging requests.
 */
export function createMongoClient(uri: string): MongoClient {
  return new MongoClient(uri, {
    serverSelectionTimeoutMS: 2000,
    connectTimeoutMS: 2000,
    socketTimeoutMS: 30_000,
    maxPoolSize: 50,
    appName: "deskline-server",
  });
}

/** Is the database answering right now? Used by /readyz. */
export async function ping(db: Db): Promise<boolean> {
  try {
    await db.command({ ping: 1 }, { timeoutMS: 1500 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `setUp` (index creation) until it succeeds, so a database that is down at start only
 * delays readiness; logs once per state change rather than once per retry.
 */
export async function retryUntilReady(
  setUp: () => Promise<void>,
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  let delay = 250;
  let warned = false;
  while (!signal.aborted) {
    try {
      await setUp();
      if (warned) logger.info("database reachable again; indexes are in place");
      return;
    } catch (error) {
      if (!warned) logger.warn({ err: error }, "database unreachable; API answers 503 until it returns");
      warned = true;
      await new Promise((done) => setTimeout(done, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }
}
