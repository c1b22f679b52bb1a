import type { Context, Next } from "koa";
import { isDatabaseUnavailable } from "../database/errors.js";
import {
  AppError,
  DatabaseNotReadyError,
  DatabaseUnavailableError,
  DomainError,
  type ErrorKind,
  errorBody,
  routeNotFound,
} from "../errors.js";
import type { Logger } from "../logger.js";

// Where whatever a request's handlers throw becomes the API's error response: an AppError as it
// is, a DomainError by its kind, an unreachable database as 503, anything else as a bare 500.

/** The HTTP status of each kind of domain failure: the one place a store's error meets HTTP. */
const STATUS_OF_KIND: Record<ErrorKind, number> = { invalid: 400, not_found: 404, conflict: 409 };

/** A store's or a rule's error as the API answers it. */
export function httpError(error: DomainError): AppError {
  return new AppError(STATUS_OF_KIND[error.kind], error.code, error.message, {
    param: error.param,
    details: error.details,
  });
}

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
        throw routeNotFound(ctx.method, ctx.path);
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
  if (caught instanceof DomainError) return httpError(caught);
  if (caught instanceof DatabaseUnavailableError || isDatabaseUnavailable(caught)) {
    logger.warn(
      { reason: (caught as Error).message, requestId: ctx.state.requestId },
      "database unavailable",
    );
    const message =
      caught instanceof DatabaseNotReadyError
        ? "The server is still preparing the database for this version (migrations and indexes); retry with backoff."
        : "The database is unreachable right now; retry with backoff.";
    return new AppError(503, "database_unavailable", message, { headers: { "Retry-After": "5" } });
  }
  logger.error({ err: caught, requestId: ctx.state.requestId }, "unhandled error");
  return new AppError(500, "internal_error", "Something went wrong on our side; retry later.");
}
