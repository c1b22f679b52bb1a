import type { AddressInfo } from "node:net";
import { createApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/config.js";
import { DatabaseConnection } from "../../src/platform/database/client.js";
import { startEmbeddedDatabase } from "../../src/platform/database/embedded.js";
import { answerClientErrors } from "../../src/platform/http/client-errors.js";
import { loadOpenApi } from "../../src/platform/http/openapi.js";
import { createLogger } from "../../src/platform/logger.js";
import { createStore, prepareDatabase } from "../../src/store.js";
import { WebhookDelivery } from "../../src/webhooks/delivery/worker.js";

export interface TestServer {
  baseUrl: string;
  adminToken: string;
  mongodbUri: string;
  databaseName: string;
  stop(): Promise<void>;
}

/**
 * A real server on a real database over real HTTP. `mongodbUri` reuses a running database (a
 * second server with other settings, e.g. a tight rate limit); without it, the embedded one.
 */
export async function startTestServer(
  options: {
    mongodbUri?: string;
    config?: Partial<Config>;
    databaseName?: string;
    /** The rate limiter's clock (milliseconds), to move time without sleeping. */
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
    adminToken,
    rateLimitPerSecond: 0,
    databaseName: options.databaseName ?? `deskline_test_${process.pid}`,
    ...options.config,
  };
  const database = new DatabaseConnection(mongodbUri, config.databaseName);
  const store = createStore(database.db, config, logger);
  await database.connectUntilReady(() => prepareDatabase(store, logger).then(() => {}), logger);
  // The queueing half of delivery, as an API process has it: resends and recoveries record their
  // deliveries and schedule lanes (no worker runs them here).
  const delivery = new WebhookDelivery(database.db, store, { ...config, role: "api" }, logger);
  await delivery.ready();
  const app = createApp({
    config,
    store,
    database,
    openapi: await loadOpenApi(),
    logger,
    clock: options.clock,
  });
  const server = app.listen(0, "127.0.0.1");
  answerClientErrors(server);
  await new Promise<void>((done) => server.once("listening", done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    adminToken,
    mongodbUri,
    databaseName: config.databaseName,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      if (options.dropDatabase) await database.db.dropDatabase();
      await database.close();
      await embedded?.stop();
    },
  };
}
