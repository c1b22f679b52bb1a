// The API's errors: what stores and rules throw (DomainError: a kind, no HTTP), what the HTTP
// layer throws (AppError, with its status), and the body both are answered with. The one place
// that turns a kind into a status is platform/http/error-response.ts.
import type { Schema } from "../spec/types.js";

/**
 * The spec's `ErrorType` and `ErrorCode` enums: a code the spec does not list fails typecheck, so
 * the server cannot answer one the contract does not document.
 */
export type ErrorType = Schema<"ErrorType">;
export type ErrorCode = Schema<"ErrorCode">;

const typeByStatus = (status: number): ErrorType => {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
};

/** What an error carries beyond its status, code and message; every field is optional. */
export interface AppErrorOptions {
  /** The request field at fault, as the spec's `param` names it. */
  param?: string | undefined;
  /** Headers the answer carries (`WWW-Authenticate`, `Retry-After`). */
  headers?: Record<string, string>;
  /** Fields the error object carries beyond the common ones, declared in the spec's `Error`. */
  details?: ErrorDetails;
}

/**
 * The one way code reports a client-visible failure. The error middleware
 * (platform/http/error-response.ts) turns it into the spec's error body; `code` is stable and documented
 * in the spec, `message` is for people.
 */
export class AppError extends Error {
  readonly type: ErrorType;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;
  readonly details: ErrorDetails;
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    { param, headers = {}, details = {} }: AppErrorOptions = {},
  ) {
    super(message);
    this.type = typeByStatus(status);
    this.param = param;
    this.headers = headers;
    this.details = details;
  }
}

/**
 * What kind of failure a store or a rule reports, in the domain's words: the request names what
 * is not there, clashes with what is, or asks for what the rules refuse.
 */
export type ErrorKind = "not_found" | "conflict" | "invalid";

/**
 * A failure of the domain: thrown by stores and rules, which know no HTTP. Its `code`, `message`
 * and `param` are the answer's; the HTTP status comes from its `kind`, in one place
 * (platform/http/error-response.ts `httpError`).
 */
export class DomainError extends Error {
  readonly param: string | undefined;
  readonly details: ErrorDetails;
  constructor(
    readonly kind: ErrorKind,
    readonly code: ErrorCode,
    message: string,
    { param, details = {} }: Omit<AppErrorOptions, "headers"> = {},
  ) {
    super(message);
    this.param = param;
    this.details = details;
  }
}

/**
 * The one 404 of a named resource: no record of the workspace has that id (another workspace's
 * id is exactly as missing). `param` names the field that carried the id; without an `id` (a
 * lookup by a secret, which is never echoed back) the message names only the noun.
 */
export function notFound(noun: string, id: string | undefined, param = "id"): DomainError {
  const what = id === undefined ? noun : `${noun}: '${id}'`;
  return new DomainError("not_found", "resource_missing", `No such ${what}.`, { param });
}

/**
 * A body's reference to a record the workspace does not have: `400 parameter_invalid` naming the
 * field, the same answer for another workspace's id, so ids cannot be probed. Only the path's
 * own record is a 404 (`notFound`).
 */
export function unknownReference(param: string, noun: string, id: string): DomainError {
  return new DomainError(
    "invalid",
    "parameter_invalid",
    `\`${param}\` must be the id of a ${noun} in this workspace; '${id}' is not one.`,
    { param },
  );
}

/** No route has this path (or the path has no route for this method and no other either). */
export function routeNotFound(method: string, path: string): AppError {
  return new AppError(404, "route_not_found", `No route for ${method} ${path}.`);
}

/** Other writes to one record kept winning for too long (records/record.ts `updateInWorkspace`). */
export function concurrentUpdate(noun: string): DomainError {
  return new DomainError(
    "conflict",
    "concurrent_update",
    `The ${noun} is being changed by other requests; retry.`,
  );
}

/** The optional fields of the spec's error object that only some codes carry. */
export interface ErrorDetails {
  /** `email_taken` / `external_id_taken`: the id of the record that holds the value. */
  holder_id?: string;
}

/** Raised before touching a database not yet reached (platform/http/route-kit.ts); answered with 503. */
export class DatabaseUnavailableError extends Error {}

/**
 * Raised before touching a database that answers but is not yet migrated and indexed for this
 * version (platform/http/route-kit.ts): the same 503 `database_unavailable`, saying why.
 */
export class DatabaseNotReadyError extends DatabaseUnavailableError {}

/**
 * The spec's `Error` object: the one place its fields are laid out, in the spec's order. A batch
 * item's error is this object alone; a response adds the request's id (`errorBody`).
 */
export function errorObject(error: AppError) {
  return {
    type: error.type,
    code: error.code,
    message: error.message,
    ...(error.param === undefined ? {} : { param: error.param }),
    ...error.details,
  };
}

/** The body of every error response (the spec's `ErrorResponse`). */
export function errorBody(error: AppError, requestId: string) {
  return { error: { ...errorObject(error), request_id: requestId } };
}
