import type { Server } from "node:http";
import type Koa from "koa";
import { createApp } from "./app.js";
import type { Config } from "./config.js";
import { createMetrics } from "./metrics-wire.js";
import type { Clock } from "./platform/clock.js";
import { DatabaseConnection } from "./platform/database/client.js";
import { DatabaseClock } from "./platform/database/database-clock.js";
import { answerClientErrors } from "./platform/http/client-errors.js";
import { loadOpenApi } from "./platform/http/openapi.js";
import type { Logger } from "./platform/logger.js";
import type { Metrics } from "./platform/metrics/metrics.js";
import { createStore, prepareDatabase, type Store } from "./store.js";
import { startSweeps } from "./sweeps.js";
import { WebhookDelivery } from "./webhooks/delivery/worker.js";
import { holdSecretWritesUntilChecked } from "./webhooks/endpoints/reseal.js";
import { createWorkerApp } from "./worker-app.js";

/**
 * The one composition of a server: database preparation, the relay hook, webhook delivery (the
 * queueing half for every role, the sending half for `worker` and `all`), the sweeps and the HTTP
 * listener. `main.ts` runs one per process and adds what only a process has (config from the
 * environment, telemetry, the embedded database, signals, the demo); the tests and benches run
 * one or several in their own process, so a test reads like a deployment without paying for a
 * process start (docs/decisions.md, "One composition for main and the tests").
 */

export interface ServerOptions {
  /** Where the data lives; `stop()` closes it. Default: a client of `config.mongodbUri`. */
  database?: DatabaseConnection;
  logger: Logger;
  /**
   * What decides by time across processes reads it here: the shared rate limit's buckets and
   * delivery (leases, due times, retries). By default the database's clock
   * (platform/database/database-clock.ts), so that hosts whose clocks differ agree on them.
   */
  clock?: Clock;
  /** Where to listen; default `config.host`:`config.port` (port 0 picks a free one). */
  listen?: { host: string; port: number };
  /** The CA certificates delivery trusts; default: the system's plus NODE_EXTRA_CA_CERTS. */
  ca?: string[];
  /** Node's process metrics in /metrics; off where many servers share one process. */
  processMetrics?: boolean;
}

export interface RunningServer {
  app: Koa;
  store: Store;
  database: DatabaseConnection;
  metrics: Metrics;
  baseUrl: string;
  /** Settles once the database answered and its migrations and indexes are done. */
  databaseReady: Promise<void>;
  /**
   * Delivery once it is built (and, on workers, running), with the sweeps on; rejects when it
   * cannot start (main exits then: a process that cannot deliver must not look healthy).
   */
  deliveryReady: Promise<WebhookDelivery>;
  /**
   * Graceful stop: no new requests or lanes, in-flight requests and running attempts finish
   * (at most `timeoutMs`, default SHUTDOWN_TIMEOUT_MS), then the database client closes.
   */
  stop(timeoutMs?: number): Promise<void>;
}

/** `deliveryReady`'s rejection when the server was stopped before delivery started: no failure. */
export class ServerStopped extends Error {
  constructor() {
    super("the server was stopped before delivery started");
  }
}

/**
 * Starts a server and returns once it listens; the database may still be coming up (the API
 * answers 503 until it is, and /readyz says so): await `deliveryReady` for a server that delivers.
 */
export async function startServer(config: Config, options: ServerOptions): Promise<RunningServer> {
  const { logger } = options;
  const database = options.database ?? new DatabaseConnection(requiredUri(config), config.databaseName);
  // The database's time, whichever process decides, unless a test gave a clock: a host a minute
  // behind would otherwise find a key's shared bucket a minute ahead and refuse it (429).
  const databaseClock = options.clock ? undefined : new DatabaseClock(database.db);
  const clock = options.clock ?? (databaseClock as DatabaseClock);
  const store = createStore(database.db, config, logger, clock);
  const metrics = createMetrics({ store, database, processMetrics: options.processMetrics });
  const parts: Parts = {
    config,
    logger,
    clock,
    databaseClock,
    database,
    store,
    metrics,
    ca: options.ca,
  };
  const background = startBackground(parts);
  const app = await buildApp(parts);
  const listening = await listen(app, options.listen ?? config, logger, config.role);
  return {
    app,
    store,
    database,
    metrics,
    baseUrl: listening.baseUrl,
    databaseReady: background.databaseReady,
    deliveryReady: background.deliveryReady,
    async stop(timeoutMs = config.shutdownTimeoutMs) {
      await Promise.all([background.stop(timeoutMs), listening.close(timeoutMs)]);
      await database.close();
    },
  };
}

function requiredUri(config: Config): string {
  if (!config.mongodbUri) throw new Error("startServer: pass a database or set MONGODB_URI");
  return config.mongodbUri;
}

/** What the start-up steps share once the database client exists. */
interface Parts {
  config: Config;
  logger: Logger;
  /** What the rate limit, the queue and delivery decide by: the database's, or a test's. */
  clock: Clock;
  /** The database's clock when it is the one read: started once the database answers. */
  databaseClock: DatabaseClock | undefined;
  database: DatabaseConnection;
  store: Store;
  metrics: Metrics;
  ca: string[] | undefined;
}

/** The work beside the HTTP server: migrations and indexes, webhook delivery, the sweeps. */
interface Background {
  databaseReady: Promise<void>;
  deliveryReady: Promise<WebhookDelivery>;
  /** Stops what started (or waits for it to start first), letting running attempts finish. */
  stop(timeoutMs: number): Promise<void>;
}

/**
 * Connects (retrying until the database answers), migrates and composes delivery, then starts
 * delivery and the sweeps. Ready — the API serves, `/readyz` says so — means all of that set-up
 * is done (docs/decisions.md, "Ready means migrated"), so no operation waits for a part still
 * being built: a recovery finds its scheduler. Every role queues the deliveries of the events it
 * relays, through the queue alone, which waits for no worker (webhooks/deliveries/queue.ts);
 * workers also send them. Agenda is built once the database answers (its backend creates indexes
 * when it connects).
 */
function startBackground(parts: Parts): Background {
  const { database, store, logger } = parts;
  // The sweeps' arithmetic is on Date.now() (sweeps.ts).
  const startedAt = Date.now();
  const checkSecrets = holdSecretWritesUntilChecked(store, logger);
  store.relay.addHook(async (events) => {
    await store.deliveryQueue.fanOut(events);
  });
  const stopping = new AbortController();
  let delivery: WebhookDelivery | undefined;
  const prepare = async () => {
    // The database's time first: the migration lock, the rate limit and the queue decide by it.
    await parts.databaseClock?.start();
    await prepareDatabase(store, logger, parts.clock);
    delivery ??= composeDelivery(parts);
    await delivery.ready();
  };
  const databaseReady = database.connectUntilReady(prepare, logger, stopping.signal);
  // Shutdown waits for this: a stop that lands while Agenda is starting must not close the
  // database under its first queries (an unhandled MongoClientClosedError).
  const started = databaseReady.then(() =>
    stopping.signal.aborted || !delivery
      ? undefined
      : startDelivery(parts, delivery, { checkSecrets, startedAt }),
  );
  const deliveryReady = started.then((stopSweeps) => {
    if (!stopSweeps || !delivery) throw new ServerStopped();
    return delivery;
  });
  // Whoever starts the server decides what a failure means (main exits); stop() must not throw it again.
  deliveryReady.catch(() => {});
  return {
    databaseReady,
    deliveryReady,
    async stop(timeoutMs) {
      stopping.abort();
      const stopSweeps = await started.catch(() => undefined);
      stopSweeps?.();
      await delivery?.stop(timeoutMs);
      parts.databaseClock?.stop();
    },
  };
}

/** Delivery's parts, built (not started) once the database answers; every role has them. */
function composeDelivery({ config, logger, database, store, metrics, clock, ca }: Parts): WebhookDelivery {
  return new WebhookDelivery(database.db, store, config, logger, { clock, metrics, ...(ca ? { ca } : {}) });
}

/** Once ready: the stored secrets checked, delivery run by workers, sweeps on; returns the sweeps' stop. */
async function startDelivery(
  { config, logger, store }: Parts,
  delivery: WebhookDelivery,
  steps: { checkSecrets: () => Promise<void>; startedAt: number },
): Promise<() => void> {
  // Before any delivery: a key that cannot open the stored secrets would sign with garbage.
  await steps.checkSecrets();
  const stopSweeps = startSweeps(store, config, logger, steps.startedAt);
  if (config.role !== "api") {
    await delivery.start();
    // The proxy as its toString shows it: no password (webhooks/egress-proxy.ts).
    const egress = config.webhookEgress && {
      egressProxy: String(config.webhookEgress.proxy),
      noProxy: config.webhookEgress.noProxy,
    };
    logger.info(
      { role: config.role, concurrency: config.webhookConcurrency, ...egress },
      "delivering webhooks",
    );
  }
  return stopSweeps;
}

/** A worker serves only its probes and metrics (worker-app.ts); the other roles the whole API. */
async function buildApp({ config, logger, database, store, metrics, clock }: Parts): Promise<Koa> {
  if (config.role === "worker") {
    return createWorkerApp({ database, logger, metrics, metricsToken: config.metricsToken });
  }
  const openapi = await loadOpenApi();
  return createApp({ config, store, database, openapi, logger, metrics, clock: () => clock.now() });
}

/** A listening HTTP server; `close` lets in-flight requests finish, up to `timeoutMs`. */
interface Listening {
  baseUrl: string;
  close(timeoutMs: number): Promise<void>;
}

/** Serves `app` on host:port; `close` lets in-flight requests finish, up to `timeoutMs`. */
async function listen(
  app: Koa,
  { host, port }: { host: string; port: number },
  logger: Logger,
  role: Config["role"],
): Promise<Listening> {
  const server: Server = app.listen(port, host);
  answerClientErrors(server);
  await new Promise<void>((done, fail) => server.once("listening", done).once("error", fail));
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
  logger.info({ baseUrl, role }, "listening");
  return {
    baseUrl,
    async close(timeoutMs) {
      const force = setTimeout(() => server.closeAllConnections(), timeoutMs).unref();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeIdleConnections();
      });
      clearTimeout(force);
    },
  };
}
