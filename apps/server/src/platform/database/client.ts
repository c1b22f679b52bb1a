import { type Db, MongoClient } from "mongodb";
import { AGAIN, type BackoffPolicy, retry } from "../backoff.js";
import type { Logger } from "../logger.js";
import { instrumentMongoClient, telemetryActive } from "../telemetry/index.js";

/**
 * The driver settings the server uses; the benchmark's raw-driver baseline uses them too. With
 * tracing on, command monitoring feeds a span per command (platform/telemetry/sdk.ts); off, the driver
 * emits no command events at all.
 */
export function createMongoClient(uri: string): MongoClient {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: 2000,
    // Opening a connection to a busy database can take a while; a down one refuses at once.
    connectTimeoutMS: 10_000,
    socketTimeoutMS: 30_000,
    maxPoolSize: 50,
    appName: "deskline-server",
    ...(telemetryActive() ? { monitorCommands: true } : {}),
  });
  instrumentMongoClient(client);
  return client;
}

/** A database that is down at start is tried again after 250 ms, 500 ms … then every 5 s. */
const RECONNECT: BackoffPolicy = { firstMs: 250, factor: 2, maxMs: 5000 };

/**
 * What /readyz answers: `ready` once the database answers and this version's migrations and
 * indexes are done; `migrating` while it answers but they are not (yet); `database_unavailable`
 * while it does not answer.
 */
export type Readiness = "ready" | "migrating" | "database_unavailable";

/**
 * One MongoClient for the process. Short server-selection timeouts make an unreachable database
 * answer 503 quickly instead of hanging requests.
 *
 * The first connection is ours to make: the driver's auto-connect closes the client for good when
 * the database is down at start (every later operation throws "Topology is closed"), so the app
 * is told `isConnected()` and answers 503 until `connectUntilReady` succeeds. After that, the
 * driver reconnects by itself when the database drops and comes back.
 *
 * Connected is not ready: until `connectUntilReady`'s set-up (migrations, indexes) is done, the
 * database may be half made (a unique index missing, documents in an older shape), so
 * `isReady()` stays false and the API answers 503 (docs/decisions.md, "Ready means migrated").
 */
export class DatabaseConnection {
  readonly client: MongoClient;
  readonly db: Db;
  private connected = false;
  private prepared = false;

  constructor(uri: string, databaseName: string) {
    this.client = createMongoClient(uri);
    this.db = this.client.db(databaseName);
  }

  isConnected(): boolean {
    return this.connected;
  }

  /** Connected, and this version's migrations and indexes are done: the API may touch the database. */
  isReady(): boolean {
    return this.prepared;
  }

  /** What /readyz answers (see Readiness). */
  async readiness(): Promise<Readiness> {
    if (!(await this.ping())) return "database_unavailable";
    return this.prepared ? "ready" : "migrating";
  }

  /** Is the database answering right now? Used by /readyz and the `database_up` gauge. */
  async ping(): Promise<boolean> {
    if (!this.connected) return false;
    try {
      await this.db.command({ ping: 1 }, { timeoutMS: 1500 });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Connects, then runs `setUp` (migrations, index creation), retrying with backoff until both
   * succeed, so a database that is down at start only delays readiness; `isReady()` turns true
   * once they have. Logs once per state change.
   */
  async connectUntilReady(setUp: () => Promise<void>, logger: Logger, signal?: AbortSignal): Promise<void> {
    let warned = false;
    await retry(
      RECONNECT,
      async () => {
        try {
          await this.client.connect();
          this.connected = true;
          await setUp();
          this.prepared = true;
          if (warned) logger.info("database reachable; indexes are in place");
          return true;
        } catch (error) {
          if (!warned) {
            logger.warn(
              { reason: (error as Error).message },
              "database unreachable; the API answers 503 until it is back",
            );
          }
          warned = true;
          return AGAIN;
        }
      },
      { signal },
    );
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
