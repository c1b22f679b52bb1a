import type { Context, Middleware } from "koa";
import type { Metrics } from "./metrics.js";

/**
 * Counts and times every request. Mounted outside the error middleware, so it sees the status the
 * client got, errors included. The operation label is the spec's operationId (the router names
 * each route by it), else the matched route (`/healthz`, docs assets), else `unmatched`: never the
 * raw path, which would make a time series per id.
 */
export function requestMetrics(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      metrics.request(operationOf(ctx), ctx.status, seconds);
      if (ctx.status === 429 && errorCode(ctx) === "rate_limited") metrics.rateLimitRejected();
      if (ctx.response.get("Idempotent-Replayed") === "true") metrics.idempotentReplay();
    }
  };
}

function operationOf(ctx: Context): string {
  const state = ctx as Context & { _matchedRouteName?: string; _matchedRoute?: string | RegExp };
  if (state._matchedRouteName) return state._matchedRouteName;
  if (typeof state._matchedRoute === "string") return state._matchedRoute;
  return "unmatched";
}

function errorCode(ctx: Context): string | undefined {
  return (ctx.body as { error?: { code?: string } } | undefined)?.error?.code;
}
