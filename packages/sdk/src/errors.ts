// One error class per kind of failure, so callers branch with `instanceof` (as with stripe-node)
// rather than on status numbers. API errors carry the body's stable `code` and `param`.

import type { components } from "@deskline/spec/openapi";

/**
 * The `error` object of every Deskline error body (spec: `ErrorResponse`), every field optional:
 * a body that did not come from the API (a proxy's 502) may lack any of them.
 */
export type ErrorBody = Partial<components["schemas"]["ErrorResponse"]["error"]>;

export interface DesklineErrorFields {
  /** HTTP status; undefined when no response arrived (connection errors, timeouts). */
  status?: number;
  /** Stable machine-readable code, e.g. `resource_missing`, `email_taken`. */
  code?: string;
  /** The body field or query parameter at fault, when there is one. */
  param?: string;
  /** The `Request-Id` of the response; quote it when asking for support. */
  requestId?: string;
  /** The error category of the body, e.g. `invalid_request_error`. */
  type?: string;
  /** The response body as received (parsed JSON, or text when it was not JSON). */
  raw?: unknown;
  /** The response headers, when a response arrived. */
  headers?: Headers;
  cause?: unknown;
}

/** Base class of every error the SDK throws. */
export class DesklineError extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly type: string | undefined;
  readonly raw: unknown;
  readonly headers: Headers | undefined;

  constructor(message: string, fields: DesklineErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.status = fields.status;
    this.code = fields.code;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.type = fields.type;
    this.raw = fields.raw;
    this.headers = fields.headers;
  }
}

/** 401: no API key, or an unknown or revoked one. */
export class AuthenticationError extends DesklineError {}
/** 403: the API key lacks the scope the operation needs. */
export class PermissionError extends DesklineError {}
/** 404: no such object in this workspace (or no such route). */
export class NotFoundError extends DesklineError {}
/** 409: conflicts with the current state (`email_taken`, `ticket_status_terminal`, …). */
export class ConflictError extends DesklineError {
  /**
   * With `email_taken` / `external_id_taken`: the id of the contact that already holds the value
   * (the body's `holder_id`), to update that contact instead; undefined for other codes.
   */
  get holderId(): string | undefined {
    const id = (this.raw as { error?: ErrorBody } | undefined)?.error?.holder_id;
    return typeof id === "string" ? id : undefined;
  }
}
/** Other 4xx: the request is invalid (`parameter_invalid`, `idempotency_key_reused`, …). */
export class InvalidRequestError extends DesklineError {}
/** 429: the API key's rate limit; `retryAfter` is the server's `Retry-After` in seconds. */
export class RateLimitError extends DesklineError {
  get retryAfter(): number | undefined {
    const value = Number(this.headers?.get("retry-after") ?? Number.NaN);
    return Number.isFinite(value) ? value : undefined;
  }
}
/** 5xx, or any status the SDK does not know: a failure on the server's side. */
export class APIError extends DesklineError {}
/** No response: the connection failed or was reset. */
export class ConnectionError extends DesklineError {}
/** No response within `timeoutMs`. */
export class TimeoutError extends DesklineError {}

function classFor(status: number): typeof DesklineError {
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 400 && status < 500) return InvalidRequestError;
  return APIError;
}

/**
 * The error to throw for a non-2xx response, from its status and (parsed) body: what the
 * namespaces throw, for callers of the raw client (`{ data, error, response }`) who want the same.
 */
export function errorFromResponse(response: Response, body: unknown): DesklineError {
  const error = (body as { error?: ErrorBody } | undefined)?.error;
  const details = typeof error === "object" && error !== null ? error : {};
  const requestId = response.headers.get("request-id") ?? details.request_id;
  const message = details.message ?? `The server answered ${response.status} ${response.statusText}`.trim();
  const ErrorClass = classFor(response.status);
  return new ErrorClass(message, {
    status: response.status,
    code: details.code,
    param: details.param,
    requestId,
    type: details.type,
    raw: body,
    headers: response.headers,
  });
}
