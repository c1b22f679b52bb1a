#!/usr/bin/env node
import { type Config, ConfigError, loadConfig } from "./config.js";
import { demoConsoleLink } from "./console/demo-link.js";
import { type DemoWorkspace, openDemoWorkspace } from "./demo.js";
import { DatabaseConnection } from "./platform/database/client.js";
import { DataDirInUse } from "./platform/database/data-dir.js";
import { type EmbeddedDatabase, startEmbeddedDatabase } from "./platform/database/embedded.js";
import { createLogger, type Logger } from "./platform/logger.js";
import { SecretKeyError } from "./platform/secret-box.js";
import { startTelemetry, stopTelemetry } from "./platform/telemetry/index.js";
import { type RunningServer, ServerStopped, startServer } from "./server.js";
import { createStore, prepareDatabase } from "./store.js";
import { sealStoredSecrets } from "./webhooks/endpoints/reseal.js";

/** How long a shutdown may take beyond SHUTDOWN_TIMEOUT_MS (the running attempts' bound) before it gives up. */
const SHUTDOWN_MARGIN_MS = 15_000;

/**
 * A server process: config from the environment, logging and tracing, the database (MONGODB_URI
 * or the embedded one), the server itself (server.ts: the same composition the tests run, per
 * ROLE: `api` serves the API, `worker` delivers webhooks and serves only its probes and metrics,
 * `all` both), and a graceful shutdown on SIGTERM or SIGINT that lets in-flight requests and
 * running delivery attempts finish before the database closes.
 *
 * Flags: `--demo` (`pnpm start`) opens a demo workspace and prints a banner; `--ephemeral` keeps
 * the embedded database in memory instead of in DESKLINE_DATA_DIR (the tests run that way).
 * `deskline-server reencrypt-secrets` and `deskline-server migrate` run those commands instead.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = await startLogging(config);
  const ephemeral = process.argv.includes("--ephemeral");
  const { database, embedded } = await openDatabase(config, logger, ephemeral ? undefined : config.dataDir);
  const starting = startServer(config, { database, logger });
  // From here on, before the server says it listens and before the demo's banner: a Ctrl-C in
  // the first seconds of `pnpm start` stops as gracefully as a later one (status 0, the database
  // closed), not by the signal. Registered after "listening" was logged, a SIGINT sent on that
  // line could land first on a busy machine, and end the process by the signal.
  const running = starting.then((server) => ({ server, embedded }));
  // A failed start is main's to report (the await below), not this copy's.
  running.catch(() => {});
  const stopping = stopOnSignals({ config, logger }, running);
  const server = await starting;
  server.deliveryReady.catch((err: unknown) => {
    if (!(err instanceof ServerStopped)) exitOnStartFailure(logger, err);
  });
  if (config.role !== "worker" && process.argv.includes("--demo")) {
    try {
      await server.databaseReady;
      await showDemo(config, server, embedded?.dataDir);
    } catch (err) {
      // Stopped while the banner was being made: the shutdown under way ends the process.
      if (!stopping()) throw err;
    }
  }
}

/** Tracing first: the logger, the database client and the app instrument themselves only when it is on. */
async function startLogging(config: Config): Promise<Logger> {
  const telemetry = await startTelemetry(config.telemetry);
  const logger = createLogger(config.logLevel, {
    format: config.logFormat,
    ...(telemetry ? { mixin: () => telemetry.logFields() } : {}),
  });
  if (config.telemetry) {
    const { tracesUrl, protocol, serviceName, sampler } = config.telemetry;
    logger.info({ tracesUrl, protocol, serviceName, sampler: sampler.name }, "tracing on (OpenTelemetry)");
  }
  return logger;
}

/** A client of MONGODB_URI, or of the embedded database this starts (in `dataDir`, else in memory). */
async function openDatabase(
  config: Config,
  logger: Logger,
  dataDir: string | undefined,
): Promise<{ database: DatabaseConnection; embedded: EmbeddedDatabase | undefined }> {
  const embedded = config.mongodbUri
    ? undefined
    : await startEmbeddedDatabase(logger, config.embeddedDatabase, { dataDir });
  const uri = config.mongodbUri ?? (embedded?.uri as string);
  return { database: new DatabaseConnection(uri, config.databaseName), embedded };
}

/**
 * A process that cannot deliver (or create delivery jobs) must not look healthy: it exits, and
 * the supervisor restarts it.
 */
function exitOnStartFailure(logger: Logger, err: unknown): never {
  if (err instanceof SecretKeyError) {
    logger.fatal({ keyId: err.keyId }, err.message);
    console.error(`secrets error: ${err.message}`);
    process.exit(1);
  }
  logger.fatal({ err }, "webhook delivery could not start");
  process.exit(1);
}

/** `pnpm start`: the demo workspace, its key and a console link, in a banner. */
async function showDemo(config: Config, server: RunningServer, dataDir: string | undefined): Promise<void> {
  const demo = await openDemoWorkspace(server.store, dataDir);
  const consoleUrl = await demoConsoleLink(server.store, demo.workspaceId, server.baseUrl, config);
  printDemo(server.baseUrl, demo, dataLine(config, dataDir), config.adminToken, consoleUrl);
}

interface Running {
  server: RunningServer;
  embedded: EmbeddedDatabase | undefined;
}

/** SIGTERM and SIGINT stop the process gracefully, once; the answer tells whether one has. */
function stopOnSignals(core: { config: Config; logger: Logger }, running: Promise<Running>): () => boolean {
  let shuttingDown = false;
  const onSignal = (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    void shutdown(core, running, signal);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  return () => shuttingDown;
}

/** In-flight requests and running attempts finish, then the database closes and the process exits 0. */
async function shutdown(
  { config, logger }: { config: Config; logger: Logger },
  running: Promise<Running>,
  signal: string,
): Promise<never> {
  logger.info({ signal }, "shutting down: finishing in-flight requests and delivery attempts");
  // A stop must end even when the database stops answering (a call on a connection that died
  // without closing waits forever): after the attempts' own bound and a margin, exit anyway.
  // Locks left behind expire and their jobs are taken over, as after a SIGKILL.
  setTimeout(() => {
    logger.error({ signal }, "shutdown did not finish in time (is the database answering?); exiting");
    process.exit(1);
  }, config.shutdownTimeoutMs + SHUTDOWN_MARGIN_MS).unref();
  // A signal while the server was starting: it stops once started.
  const { server, embedded } = await running;
  await server.stop(config.shutdownTimeoutMs);
  await embedded?.stop();
  // Exports the spans still buffered.
  await stopTelemetry().catch((err: unknown) => logger.warn({ err }, "tracing: final export failed"));
  logger.info("stopped");
  process.exit(0);
}

/** The banner's answer to "where does my data live?". */
function dataLine(config: Config, dataDir: string | undefined): string {
  if (config.mongodbUri) return `MONGODB_URI, database ${config.databaseName}`;
  if (dataDir) return `${dataDir} (kept across restarts; \`pnpm start --ephemeral\` keeps nothing)`;
  return "in memory (--ephemeral): gone when the server stops";
}

function printDemo(
  baseUrl: string,
  demo: DemoWorkspace,
  data: string,
  adminToken: string | undefined,
  consoleUrl: string,
): void {
  const lines = [
    "",
    "Deskline is running.",
    `  Base URL:   ${baseUrl}/open/v1`,
    `  Spec:       ${baseUrl}/open/v1/openapi.yaml`,
    `  Data:       ${data}`,
    `  Workspace:  ${demo.workspaceId} (demo${demo.reused ? ", from the last start" : ""})`,
    `  API key:    ${demo.key}   (all scopes; ${demo.keyFile ? `kept in ${demo.keyFile}, 0600` : "shown once"})`,
    adminToken
      ? `  Admin API:  ${baseUrl}/admin/v1 (Bearer $ADMIN_TOKEN)`
      : "  Admin API:  off (set ADMIN_TOKEN to turn it on)",
    `  Console:    ${consoleUrl}   (webhooks; one-time link, 10 minutes)`,
    `              another: pnpm -s deskline --base-url ${baseUrl} --api-key ${demo.key} console`,
    "",
    `  Try: curl -s ${baseUrl}/open/v1/contacts -H "Authorization: Bearer ${demo.key}"`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

/**
 * `deskline-server reencrypt-secrets`: moves every stored webhook signing secret to
 * SECRETS_ENCRYPTION_KEY (sealing plaintext ones, resealing those under SECRETS_ENCRYPTION_OLD_KEYS),
 * on MONGODB_URI or, without it, the embedded database of DESKLINE_DATA_DIR (with the server
 * stopped: one process per data directory). Safe to run while servers run on MONGODB_URI, and
 * to run again.
 */
async function reencryptSecrets(): Promise<void> {
  const config = loadConfig();
  if (!config.secretsEncryptionKey) {
    throw new ConfigError("reencrypt-secrets needs SECRETS_ENCRYPTION_KEY, the key to move every secret to");
  }
  const logger = createLogger(config.logLevel);
  await withDatabase(config, logger, async (database) => {
    const store = createStore(database.db, config, logger);
    await prepareDatabase(store, logger); // the stored shapes this version reads (migrations)
    const box = store.secrets.box;
    const report = await sealStoredSecrets(store);
    process.stdout.write(
      `re-encrypted ${report.sealed} webhook signing secret(s) in ${report.documents} document(s); ` +
        `every stored secret is now under key ${box.currentKeyId}` +
        (config.secretsEncryptionOldKeys.length ? "; SECRETS_ENCRYPTION_OLD_KEYS can be removed\n" : "\n"),
    );
  });
}

/**
 * `deskline-server migrate`: runs the migrations the database has not run yet and creates the
 * indexes, then exits (docs/operations.md, "Upgrading"), on MONGODB_URI or the embedded database
 * of DESKLINE_DATA_DIR. Every start does the same; this lets an upgrade migrate before any new
 * process serves. Safe beside running servers (the lock) and to run again.
 */
async function migrate(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  await withDatabase(config, logger, async (database) => {
    const report = await prepareDatabase(createStore(database.db, config, logger), logger);
    const applied = report.applied.length ? report.applied.join(", ") : "none (the database was up to date)";
    process.stdout.write(`migrations applied: ${applied}\n`);
  });
}

/** Runs a command's `work` on MONGODB_URI or the embedded database of DESKLINE_DATA_DIR. */
async function withDatabase(
  config: Config,
  logger: Logger,
  work: (database: DatabaseConnection) => Promise<void>,
): Promise<void> {
  const { database, embedded } = await openDatabase(config, logger, config.dataDir);
  try {
    await database.client.connect();
    await work(database);
  } finally {
    await database.close();
    await embedded?.stop();
  }
}

const COMMANDS: Record<string, () => Promise<void>> = { "reencrypt-secrets": reencryptSecrets, migrate };
const command = COMMANDS[process.argv[2] ?? ""] ?? main;
command().then(
  () => {
    if (command !== main) process.exit(0);
  },
  (error: unknown) => {
    const message =
      error instanceof ConfigError
        ? `configuration error: ${error.message}`
        : error instanceof DataDirInUse || error instanceof SecretKeyError
          ? error.message
          : error;
    console.error(message);
    process.exit(1);
  },
);
