// `@deskline/webhook-verifier`'s synchronous functions: the shared algorithm over node:crypto.
import type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
import { type DesklineEvent, parseEvent } from "./event.js";
import { nodeCrypto } from "./node-crypto.js";
import type { SignOptions } from "./sign-options.js";
import { signHeader, verifyHeader } from "./signature.js";

/**
 * Checks a delivery's `Service-Signature` header (docs/design.md, Verifier) with `node:crypto`.
 *
 * @param payload The raw request body, unchanged: a string, Buffer or Uint8Array. Never a parsed
 *   and re-serialised object.
 * @param header The `Service-Signature` header value (`t=<unix>,v1=<hex>[,v1=<hex>…]`, or
 *   `v1a=<base64>` items for an endpoint that signs with Ed25519).
 * @param secret The endpoint's `whsec_…` secret or `whpk_…` public key, or several during a
 *   rotation (any match passes).
 * @param options Tolerance and clock, see {@link VerifyOptions}.
 * @returns The verified timestamp `t`, in Unix seconds.
 * @throws {WebhookVerificationError} with a stable `code` on every failure.
 */
export function verifySignature(
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options?: VerifyOptions,
): number {
  return verifyHeader(nodeCrypto, payload, header, secret, options);
}

/**
 * Verifies the signature like {@link verifySignature}, then parses the body into a typed event.
 *
 * @param payload The raw request body (string, Buffer or Uint8Array).
 * @param header The `Service-Signature` header value.
 * @param secret The endpoint secret or public key, or several during a rotation.
 * @param options Tolerance and clock, see {@link VerifyOptions}.
 * @returns The event, a union discriminated by `type`.
 * @throws {WebhookVerificationError} as {@link verifySignature}, or `invalid_payload` when the
 *   authentic body is not a JSON event.
 */
export function constructEvent(
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options?: VerifyOptions,
): DesklineEvent {
  verifySignature(payload, header, secret, options);
  return parseEvent(payload);
}

/**
 * Produces a `Service-Signature` header value for a body: what the Deskline server sends, and
 * what tests of a webhook handler need.
 *
 * @param payload The exact body that will be sent.
 * @param secret The secret to sign with (`whsec_…` signs `v1`, an Ed25519 `whsk_…` key `v1a`);
 *   with several, one signature per key in the order given (a rotation).
 * @param options `timestamp` to sign with (default: now).
 * @returns `t=<unix>,v1=<hex>[,v1=<hex>…]` (`v1a=<base64>` for a `whsk_` key).
 */
export function signPayload(payload: WebhookPayload, secret: WebhookSecret, options?: SignOptions): string {
  return signHeader(nodeCrypto, payload, secret, options);
}
