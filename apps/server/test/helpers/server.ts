import { type Config, loadConfig } from "../../src/config.js";
import { DatabaseConnection } from "../../src/platform/database/client.js";
import { startEmbeddedDatabase } from "../../src/platform/database/embedded.js";
import { createLogger } from "../../src/platform/logger.js";
import { startServer } from "../../src/server.js";

export interface TestServer {
  baseUrl: string;
  adminToken: string;
  mongodbUri: string;
  databaseName: string;
  stop(): Promise<void>;
}

/**
 * A real server (`startServer`, the composition main runs, ROLE=api: it queues deliveries but no
 * worker sends them) on a real database over real HTTP. `mongodbUri` reuses a running database (a
 * second server with other settings, e.g. a tight rate limit); without it, the embedded one.
 */
export async function startTestServer(
  options: {
    mongodbUri?: string;
    config?: Partial<Config>;
    databaseName?: string;
    /** The server's clock (milliseconds), to move time without sleeping. */
    clock?: () => number;
    /** `stop()` drops the database too (a benchmark on MONGODB_URI leaves nothing behind). */
    dropDatabase?: boolean;
  } = {},
): Promise<TestServer> {
  // MONGODB_URI and DESKLINE_EMBEDDED_DB apply to the tests as to the server.
  const fromEnv = loadConfig();
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? "warn");
  const external = options.mongodbUri ?? fromEnv.mongodbUri;
  const embedded = external ? undefined : await startEmbeddedDatabase(logger, fromEnv.embeddedDatabase);
  const mongodbUri = external ?? (embedded?.uri as string);
  const adminToken = "test-admin-token";
  const config: Config = {
    ...loadConfig({}),
    role: "api",
    adminToken,
    rateLimitPerSecond: 0,
    databaseName: options.databaseName ?? `deskline_test_${process.pid}`,
    ...options.config,
  };
  const database = new DatabaseConnection(mongodbUri, config.databaseName);
  const server = await startServer(config, {
    database,
    logger,
    listen: { host: "127.0.0.1", port: 0 },
    ...(options.clock ? { clock: { now: options.clock } } : {}),
  });
  await server.deliveryReady;
  return {
    baseUrl: server.baseUrl,
    adminToken,
    mongodbUri,
    databaseName: config.databaseName,
    async stop() {
      if (options.dropDatabase) await database.db.dropDatabase();
      await server.stop(1_000);
      await embedded?.stop();
    },
  };
}
