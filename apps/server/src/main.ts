#!/usr/bin/env node
import type { Server } from "node:http";
import { createApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { DatabaseConnection } from "./db/client.js";
import { startEmbeddedDatabase } from "./db/embedded.js";
import { createStore, ensureIndexes } from "./db/store.js";
import { createDemoWorkspace } from "./demo.js";
import { answerClientErrors } from "./http/client-errors.js";
import { loadOpenApi } from "./http/openapi.js";
import { createLogger } from "./logger.js";
import { createMetrics } from "./metrics/wire.js";
import { startSweeps } from "./sweeps.js";

/**
 * Wiring: config → database (MONGODB_URI or the embedded one) → app → listen, and a graceful
 * shutdown that lets in-flight requests finish before the database closes.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const embedded = config.mongodbUri
    ? undefined
    : await startEmbeddedDatabase(logger, config.embeddedDatabase);
  const uri = config.mongodbUri ?? (embedded?.uri as string);
  const database = new DatabaseConnection(uri, config.databaseName);
  const store = createStore(database.db, config, logger);
  const openapi = await loadOpenApi();
  const metrics = createMetrics({ store, database });
  const app = createApp({ config, store, database, openapi, logger, metrics });

  const stopping = new AbortController();
  const indexesReady = database.connectUntilReady(() => ensureIndexes(store), logger, stopping.signal);
  let stopSweeps = () => {};
  void indexesReady.then(() => {
    if (!stopping.signal.aborted) stopSweeps = startSweeps(store, config, logger);
  });

  const server: Server = app.listen(config.port, config.host);
  answerClientErrors(server);
  await new Promise<void>((done, fail) => server.once("listening", done).once("error", fail));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const baseUrl = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ baseUrl }, "listening");

  if (process.argv.includes("--demo")) {
    await indexesReady;
    const demo = await createDemoWorkspace(store);
    printDemo(baseUrl, demo.key, demo.workspaceId, config.adminToken);
  }

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    stopping.abort();
    stopSweeps();
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs).unref();
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeIdleConnections();
    });
    clearTimeout(force);
    await database.close();
    await embedded?.stop();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

function printDemo(baseUrl: string, key: string, workspaceId: string, adminToken: string | undefined): void {
  const lines = [
    "",
    "Deskline is running.",
    `  Base URL:   ${baseUrl}/open/v1`,
    `  Spec:       ${baseUrl}/open/v1/openapi.yaml`,
    `  Workspace:  ${workspaceId} (demo)`,
    `  API key:    ${key}   (all scopes; shown once)`,
    adminToken
      ? `  Admin API:  ${baseUrl}/admin/v1 (Bearer $ADMIN_TOKEN)`
      : "  Admin API:  off (set ADMIN_TOKEN to turn it on)",
    "",
    `  Try: curl -s ${baseUrl}/open/v1/contacts -H "Authorization: Bearer ${key}"`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : error;
  console.error(message);
  process.exit(1);
});
