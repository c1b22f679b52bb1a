import { Router } from "@koa/router";
import type Koa from "koa";
import type { DatabaseConnection } from "./platform/database/client.js";
import { metricsRoutes } from "./platform/http/metrics-routes.js";
import { probeRoutes } from "./platform/http/ops-routes.js";
import { serveRouter } from "./platform/http/serve.js";
import type { Logger } from "./platform/logger.js";
import type { Metrics } from "./platform/metrics/metrics.js";

export interface WorkerAppDeps {
  database: Pick<DatabaseConnection, "readiness">;
  logger: Logger;
  /** The process's metrics, which its delivery worker counts into. */
  metrics: Metrics;
  /** METRICS_TOKEN, the same rule as the API's /metrics. */
  metricsToken: string | undefined;
}

/**
 * What a `ROLE=worker` process serves on PORT: /healthz and /readyz for the
 * orchestrator, /metrics (its delivery counters) for Prometheus, and nothing else; every other
 * path is the API's 404 `route_not_found`, so a worker put behind the API's load balancer by
 * mistake answers nothing but errors and fails no write halfway.
 */
export function createWorkerApp({ database, logger, metrics, metricsToken }: WorkerAppDeps): Koa {
  const router = new Router();
  probeRoutes(router, database);
  metricsRoutes(router, metrics, metricsToken);
  return serveRouter(router, { logger, metrics });
}
