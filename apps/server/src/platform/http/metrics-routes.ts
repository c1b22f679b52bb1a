import type { Router } from "@koa/router";
import type { Metrics } from "../metrics/metrics.js";
import { requireMetricsToken } from "./auth.js";

/**
 * GET /metrics for Prometheus (text format), behind METRICS_TOKEN when it is set. Not in the
 * public spec: it is for the operator's monitoring, not for API clients (docs/operations.md).
 */
export function metricsRoutes(router: Router, metrics: Metrics, metricsToken: string | undefined): void {
  router.get("/metrics", requireMetricsToken(metricsToken), async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    ctx.type = metrics.contentType;
    ctx.body = await metrics.render();
  });
}
