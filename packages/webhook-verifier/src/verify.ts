// `@deskline/webhook-verifier`'s synchronous functions: the shared algorithm over node:crypto.
import { createHmac } from "node:crypto";
import type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
import { type DesklineEvent, parseEvent } from "./event.js";
import type { SignOptions } from "./sign-options.js";
import { type CryptoProvider, signHeader, verifyHeader } from "./signature.js";

/** HMAC-SHA256 over `<t>.<body>`; the body is hashed as given, never decoded or re-encoded. */
function hmacHex(secret: string, timestampText: string, payload: WebhookPayload): string {
  const mac = createHmac("sha256", secret).update(`${timestampText}.`);
  return (typeof payload === "string" ? mac.update(payload, "utf8") : mac.update(payload)).digest("hex");
}

const nodeCrypto: CryptoProvider<string[]> = {
  computeSignatures(secrets, timestampText, payload) {
    // One secret is the common case; no array callback for it.
    if (secrets.length === 1) return [hmacHex(secrets[0] as string, timestampText, payload)];
    return secrets.map((s) => hmacHex(s, timestampText, payload));
  },
};

/**
 * Checks a delivery's `Service-Signature` header (docs/design.md, Verifier) with `node:crypto`.
 *
 * @param payload The raw request body, unchanged: a string, Buffer or Uint8Array. Never a parsed
 *   and re-serialised object.
 * @param header The `Service-Signature` header value (`t=<unix>,v1=<hex>[,v1=<hex>…]`).
 * @param secret The endpoint's `whsec_…` secret, or several during a rotation (any match passes).
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
 * @param secret The endpoint secret, or several during a rotation.
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
 * @param secret The secret to sign with; with several, one `v1` per secret (a rotation).
 * @param options `timestamp` to sign with (default: now).
 * @returns `t=<unix>,v1=<hex>[,v1=<hex>…]`.
 */
export function signPayload(payload: WebhookPayload, secret: WebhookSecret, options?: SignOptions): string {
  return signHeader(nodeCrypto, payload, secret, options);
}
