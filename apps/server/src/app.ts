import { Router } from "@koa/router";
import type Koa from "koa";
import type { Config } from "./config.js";
import { consoleLinkRoutes } from "./console/link-routes.js";
import { consoleMiddleware } from "./console/routes.js";
import { customFieldRoutes } from "./contacts/custom-field-routes.js";
import { contactRoutes } from "./contacts/routes.js";
import { adminConversationRoutes } from "./conversations/admin-routes.js";
import { conversationRoutes } from "./conversations/routes.js";
import { docsRoutes } from "./docs/routes.js";
import { eventRoutes } from "./events/routes.js";
import { createMetrics } from "./metrics-wire.js";
import type { DatabaseConnection } from "./platform/database/client.js";
import { metricsRoutes } from "./platform/http/metrics-routes.js";
import type { OpenApi } from "./platform/http/openapi.js";
import { opsRoutes } from "./platform/http/ops-routes.js";
import { createRouteKit } from "./platform/http/route-kit.js";
import { serveRouter } from "./platform/http/serve.js";
import type { Logger } from "./platform/logger.js";
import type { Metrics } from "./platform/metrics/metrics.js";
import type { Store } from "./store.js";
import { ticketRoutes } from "./tickets/routes.js";
import { endpointStatsRoutes } from "./webhooks/deliveries/stats.js";
import { adminWebhookRoutes, webhookRoutes } from "./webhooks/routes.js";
import { adminRoutes } from "./workspaces/admin-routes.js";

export interface AppDeps {
  config: Config;
  store: Store;
  database: Pick<DatabaseConnection, "isConnected" | "isReady" | "readiness" | "ping">;
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
  consoleLinkRoutes(kit);
  contactRoutes(kit);
  customFieldRoutes(kit);
  ticketRoutes(kit);
  webhookRoutes(kit);
  endpointStatsRoutes(kit);
  eventRoutes(kit);
  conversationRoutes(kit);

  // The webhook console: its page, session and gateway into the routes above (console/routes.ts).
  const before = consoleMiddleware(store.consoleSessions, config);
  return serveRouter(router, { logger, metrics: appMetrics, before });
}
