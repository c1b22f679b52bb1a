import { randomBytes } from "node:crypto";
import type { Db, MongoClient } from "mongodb";
import { loadConfig } from "../src/config.js";
import { Events } from "../src/events/events.js";
import { EventRelay } from "../src/events/outbox-relay.js";
import { createMongoClient } from "../src/platform/database/client.js";
import { startEmbeddedDatabase } from "../src/platform/database/embedded.js";
import { createLogger } from "../src/platform/logger.js";
import { SCOPES } from "../src/workspaces/api-keys.js";
import { okJson } from "../test/helpers/bearer-json.js";
import { startTestServer } from "../test/helpers/server.js";

/**
 * What a scenario's paths and bodies are made from: plain values only, because the load generator
 * runs in a thread of its own (load-worker.ts) and gets a copy.
 */
export interface RequestContext {
  /** `http://127.0.0.1:<port>`; the benchmark targets nothing else. */
  baseUrl: string;
  /** A key of `workspaceId` with every scope. */
  apiKey: string;
  workspaceId: string;
  /** Differs per run: generated emails stay unique even on a reused MONGODB_URI deployment. */
  runId: string;
  /** The ids the scenario's dataset made, if it has one. */
  seededIds: string[];
  /** A contact the scenario's records point at, if its seed made one (tickets do). */
  contactId?: string;
}

/** What a scenario's seed and baseline get to work with. */
export interface BenchContext extends RequestContext {
  /**
   * The server's database through a client built like the server's (same pool size), so the
   * baseline measures the driver, not a differently tuned client.
   */
  db: Db;
  /** One API request with the bench key; throws, naming the answer, unless it is 2xx. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

/** MONGODB_URI, or the embedded database (mongod, else mongo-java-server) started for this run. */
export async function startBenchDatabase(): Promise<{ uri: string; stop(): Promise<void> }> {
  const { mongodbUri, embeddedDatabase } = loadConfig();
  if (mongodbUri) return { uri: mongodbUri, stop: async () => {} };
  return startEmbeddedDatabase(createLogger("warn"), embeddedDatabase);
}

export const newRunId = () => `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;

/**
 * A server for one scenario, exactly as the tests run it (test/helpers/server.ts: a real HTTP
 * server on 127.0.0.1, logger "warn", rate limiting off) on a database of its own, with a
 * workspace and a key made through the admin API. A fresh database per scenario keeps its
 * numbers independent of the scenarios before it (on mongo-java-server, most queries other than
 * lists and lookups by id scan their whole collection, so what others inserted would slow them
 * down). `stop()` drops
 * the database, so a MONGODB_URI deployment keeps nothing.
 */
export async function startScenarioServer(
  mongodbUri: string,
  databaseName: string,
  runId: string,
): Promise<{ context: BenchContext; stop(): Promise<void> }> {
  const server = await startTestServer({ mongodbUri, databaseName });
  let client: MongoClient | undefined;
  const stop = async () => {
    try {
      await client?.db(databaseName).dropDatabase();
    } finally {
      await client?.close();
      await server.stop();
    }
  };
  try {
    const call =
      (token: string) =>
      <T = unknown>(method: string, path: string, body?: unknown) =>
        okJson<T>(server.baseUrl, token, method, path, body);
    const admin = call(server.adminToken);
    const workspace = await admin<{ id: string }>("POST", "/admin/v1/workspaces", { name: "Benchmark" });
    const { key } = await admin<{ key: string }>("POST", `/admin/v1/workspaces/${workspace.id}/api-keys`, {
      name: "bench",
      scopes: [...SCOPES],
    });
    client = createMongoClient(mongodbUri);
    const context: BenchContext = {
      baseUrl: server.baseUrl,
      apiKey: key,
      workspaceId: workspace.id,
      db: client.db(databaseName),
      runId,
      seededIds: [],
      api: call(key),
    };
    return { context, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Creates `count` records through the API, `concurrency` at a time (a scenario's seed), and
 * returns their ids. On a failure it lets the requests in flight finish before throwing, so none
 * outlives the server.
 */
export async function seedMany(
  context: BenchContext,
  count: number,
  path: string,
  bodyOf: (n: number) => unknown,
  concurrency = 16,
): Promise<string[]> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const ids: string[] = [];
  const worker = async () => {
    while (next < count && !failure) {
      try {
        ids.push((await context.api<{ id: string }>("POST", path, bodyOf(next++))).id);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failure) throw failure.error;
  return ids;
}

/**
 * The relay a seed's records go through, so a dataset carries its events (relayed at once) as
 * the API's writes leave them.
 */
export function seedRelay(db: Db): EventRelay {
  return new EventRelay(db, new Events(db, loadConfig({}).eventRetentionMs), {
    immediate: true,
    logger: createLogger("warn"),
  });
}
