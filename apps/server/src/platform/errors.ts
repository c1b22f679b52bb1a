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

/**
 * The one way code reports a client-visible failure. The error middleware
 * (platform/http/error-response.ts) turns it into the spec's error body; `code` is stable and documented
 * in the spec, `message` is for people.
 */
export class AppError extends Error {
  readonly type: ErrorType;
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
    /** Fields the error object carries beyond the common ones, declared in the spec's `Error`. */
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.type = typeByStatus(status);
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
  constructor(
    readonly kind: ErrorKind,
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    /** Fields the error object carries beyond the common ones, declared in the spec's `Error`. */
    readonly details: ErrorDetails = {},
  ) {
    super(message);
  }
}

/** No record of the workspace has that id; another workspace's id is exactly as missing. */
export function notFound(noun: string, id: string): DomainError {
  return new DomainError("not_found", "resource_missing", `No such ${noun}: '${id}'.`, "id");
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

export function errorBody(error: AppError, requestId: string) {
  return {
    error: {
      type: error.type,
      code: error.code,
      message: error.message,
      ...(error.param === undefined ? {} : { param: error.param }),
      ...error.details,
      request_id: requestId,
    },
  };
}
