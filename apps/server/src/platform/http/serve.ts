import type { Router } from "@koa/router";
import Koa from "koa";
import type { Logger } from "../logger.js";
import { requestMetrics } from "../metrics/http.js";
import type { Metrics } from "../metrics/metrics.js";
import { requestSpanMiddleware } from "../telemetry/index.js";
import { allowedMethods } from "./allowed-methods.js";
import { errorMiddleware } from "./error-response.js";
import { requestId } from "./request-id.js";

/**
 * The Koa app around a router, as every process serves HTTP: request id, access log, request
 * metrics and the one error middleware, then the routes; 404 `route_not_found` and 405 (with
 * `Allow`) in the API's error body for anything else. The API (app.ts) and a worker's probes (worker-app.ts)
 * differ only in their routes. With tracing on, a span around all of it (platform/telemetry/index.ts).
 */
/** What may run ahead of the routes: plain middleware, or another router's routes. */
export type Before = Koa.Middleware | ReturnType<Router["routes"]>;

export function serveRouter(
  router: Router,
  {
    logger,
    metrics,
    before = [],
  }: {
    logger: Logger;
    metrics: Metrics;
    /** Middleware run ahead of the routes, inside the error middleware (the webhook console's, console/routes.ts). */
    before?: Before[];
  },
): Koa {
  const app = new Koa({ proxy: false });
  // Outermost, so the access log line and the error middleware run inside the request's span.
  const spans = requestSpanMiddleware();
  if (spans) app.use(spans);
  app.use(requestId);
  app.use(accessLog(logger));
  app.use(requestMetrics(metrics));
  app.use(errorMiddleware(logger));
  for (const middleware of before) app.use(middleware);
  app.use(router.routes());
  app.use(allowedMethods(router));
  // Errors are answered by errorMiddleware; Koa's own handler would only log them twice.
  app.silent = true;
  return app;
}

function accessLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        "request",
      );
    }
  };
}
