import { Router } from "@koa/router";
import type Koa from "koa";
import type { Config } from "./config.js";
import type { DatabaseConnection } from "./db/client.js";
import type { Store } from "./db/store.js";
import type { OpenApi } from "./http/openapi.js";
import { serveRouter } from "./http/serve.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics/metrics.js";
import { createMetrics } from "./metrics/wire.js";
import { adminRoutes } from "./routes/admin.js";
import { adminConversationRoutes } from "./routes/admin-conversations.js";
import { adminWebhookRoutes } from "./routes/admin-webhooks.js";
import { contactRoutes } from "./routes/contacts.js";
import { conversationRoutes } from "./routes/conversations.js";
import { docsRoutes } from "./routes/docs.js";
import { eventRoutes } from "./routes/events.js";
import { createRouteKit } from "./routes/kit.js";
import { metricsRoutes } from "./routes/metrics.js";
import { opsRoutes } from "./routes/ops.js";
import { ticketRoutes } from "./routes/tickets.js";
import { webhookEndpointRoutes } from "./routes/webhook-endpoints.js";

export interface AppDeps {
  config: Config;
  store: Store;
  database: Pick<DatabaseConnection, "isConnected" | "ping">;
  openapi: OpenApi;
  logger: Logger;
  /** Milliseconds now, for the rate limiter; tests pass a clock they move by hand. */
  clock?: () => number;
  /** The process's metrics (main.ts shares them with the delivery worker); made here if not given. */
  metrics?: Metrics;
}

/** Builds the Koa app from its dependencies; no I/O happens here (main.ts does the wiring). */
export function createApp({ config, store, database, openapi, logger, clock, metrics }: AppDeps): Koa {
  const router = new Router();
  const appMetrics = metrics ?? createMetrics({ store, database });
  const kit = createRouteKit(
    router,
    { store, database, config, openapi, metrics: appMetrics },
    logger,
    clock,
  );
  opsRoutes(router, kit);
  metricsRoutes(router, appMetrics, config.metricsToken);
  docsRoutes(router, kit);
  adminRoutes(kit);
  adminConversationRoutes(kit);
  adminWebhookRoutes(kit);
  contactRoutes(kit);
  ticketRoutes(kit);
  webhookEndpointRoutes(kit);
  eventRoutes(kit);
  conversationRoutes(kit);

  return serveRouter(router, { logger, metrics: appMetrics });
}
