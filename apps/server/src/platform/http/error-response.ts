import type { Context, Next } from "koa";
import { isDatabaseUnavailable } from "../database/errors.js";
import { AppError, DatabaseUnavailableError, errorBody } from "../errors.js";
import type { Logger } from "../logger.js";

// Where whatever a request's handlers throw becomes the API's error response: an AppError as it
// is, an unreachable database as 503, anything else as a bare 500.

/**
 * The one writer of error responses. app.ts mounts it after `requestId` and the access log (so
 * error bodies carry the request id and the log sees the final status) and before every route,
 * so it catches whatever they throw. Unknown errors are logged with their stack and answered as a
 * bare 500 so no driver message or trace reaches a client.
 */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError(404, "route_not_found", `No route for ${ctx.method} ${ctx.path}.`);
      }
    } catch (caught) {
      const error = toAppError(caught, ctx, logger);
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.body = errorBody(error, ctx.state.requestId as string);
    }
  };
}

function toAppError(caught: unknown, ctx: Context, logger: Logger): AppError {
  if (caught instanceof AppError) return caught;
  if (caught instanceof DatabaseUnavailableError || isDatabaseUnavailable(caught)) {
    logger.warn(
      { reason: (caught as Error).message, requestId: ctx.state.requestId },
      "database unavailable",
    );
    return new AppError(
      503,
      "database_unavailable",
      "The database is unreachable right now; retry with backoff.",
      undefined,
      { "Retry-After": "5" },
    );
  }
  logger.error({ err: caught, requestId: ctx.state.requestId }, "unhandled error");
  return new AppError(500, "internal_error", "Something went wrong on our side; retry later.");
}
