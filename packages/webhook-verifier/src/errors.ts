/**
 * Every way a delivery can fail verification, as a stable string. Match on `error.code`, never on
 * `error.message` (messages may be reworded).
 */
export type WebhookVerificationErrorCode =
  | "missing_secret"
  | "invalid_key"
  | "invalid_payload_type"
  | "missing_header"
  | "malformed_header"
  | "too_many_signatures"
  | "missing_timestamp"
  | "invalid_timestamp"
  | "missing_signature"
  | "invalid_signature_format"
  | "signature_mismatch"
  | "timestamp_out_of_tolerance"
  | "invalid_payload"
  | "payload_too_large";

/** Thrown by every verification function, and turned into a 400 (or 413) by the middlewares. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  /** Stable machine-readable reason, see {@link WebhookVerificationErrorCode}. */
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
