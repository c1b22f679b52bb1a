// Standard Webhooks (https://www.standardwebhooks.com/) on node:crypto: deliveries are signed this
// way too, which Svix's and standard-webhooks' libraries verify, so a Deskline receiver may use
// either scheme; and verified here, `v1a` (Ed25519) included, which those libraries do not check.
import type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
import { nodeCrypto } from "./node-crypto.js";
import type { SignOptions } from "./sign-options.js";
import {
  type StandardWebhookHeaderSource,
  type StandardWebhookHeaders,
  signStandard,
  verifyStandard,
} from "./standard-signature.js";

export type { StandardWebhookHeaderSource, StandardWebhookHeaders } from "./standard-signature.js";

/**
 * Produces the Standard Webhooks headers for a body: `webhook-signature` holds, space-separated,
 * one signature per key over `<id>.<timestamp>.<body>`: `v1,<base64>` of HMAC-SHA256 keyed with
 * the decoded `whsec_…` secret, `v1a,<base64>` of Ed25519 with a `whsk_…` secret key.
 *
 * @param id The message id (`webhook-id`): Deskline sends the event id, the same on every retry.
 * @param payload The exact body that will be sent.
 * @param secret The `whsec_…` secret or `whsk_…` key, or several during a rotation.
 * @param options `timestamp` to sign with (default: now).
 */
export function signStandardWebhook(
  id: string,
  payload: WebhookPayload,
  secret: WebhookSecret,
  options?: SignOptions,
): StandardWebhookHeaders {
  // node:crypto answers at once: never a promise here.
  return signStandard(nodeCrypto, id, payload, secret, options) as StandardWebhookHeaders;
}

/**
 * Checks a delivery's Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) with node:crypto: a `v1` against each `whsec_…` secret, a `v1a` against
 * each `whpk_…` public key; any match passes. Then the timestamp tolerance.
 *
 * @param payload The raw request body, unchanged.
 * @param headers The request's headers: node's `req.headers`, a fetch `Headers`, or a plain
 *   object with the three lower-case names.
 * @param secret The `whpk_…` public key or `whsec_…` secret, or several during a rotation.
 * @param options Tolerance and clock, see {@link VerifyOptions}.
 * @returns The verified `webhook-timestamp`, in Unix seconds.
 * @throws {WebhookVerificationError} with a stable `code` on every failure.
 */
export function verifyStandardWebhook(
  payload: WebhookPayload,
  headers: StandardWebhookHeaderSource,
  secret: WebhookSecret,
  options?: VerifyOptions,
): number {
  // node:crypto answers at once: never a promise here.
  return verifyStandard(nodeCrypto, payload, headers, secret, options) as number;
}
