// Shared by every middleware, including /fetch: no node imports.
import type { VerifyOptions } from "../core.js";
import { WebhookVerificationError } from "../errors.js";

/** Options common to every middleware. */
export interface WebhookMiddlewareOptions extends VerifyOptions {
  /**
   * Largest body, in bytes, the middleware reads; a larger one is answered 413 with code
   * `payload_too_large` before it is buffered. Default 1 MiB (the API's own body limit).
   */
  maxBodyBytes?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Header names are compared lower-cased, as node and `Headers` both present them. */
export const SIGNATURE_HEADER = "service-signature";

export function maxBodyBytes(options: WebhookMiddlewareOptions | undefined): number {
  const max = options?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(max) || max < 0)
    throw new TypeError("maxBodyBytes must be a non-negative integer");
  return max;
}

/** The API's JSON error body (docs/design.md, API conventions), with the type naming this failure class. */
export interface WebhookErrorBody {
  error: { type: "webhook_verification_error"; code: string; message: string };
}

export function errorStatus(error: WebhookVerificationError): 400 | 413 {
  return error.code === "payload_too_large" ? 413 : 400;
}

export function errorBody(error: WebhookVerificationError): WebhookErrorBody {
  return { error: { type: "webhook_verification_error", code: error.code, message: error.message } };
}

/** A Content-Length that already exceeds the limit lets us refuse before reading a byte. */
export function declaredTooLarge(contentLength: string | null | undefined, max: number): boolean {
  if (contentLength == null || contentLength === "") return false;
  const n = Number(contentLength);
  return Number.isFinite(n) && n > max;
}

export function tooLarge(max: number): WebhookVerificationError {
  return new WebhookVerificationError("payload_too_large", `The webhook body is larger than ${max} bytes`);
}
