// Signs deliveries the Standard Webhooks way (https://www.standardwebhooks.com/), which Svix's and
// standard-webhooks' libraries verify: a Deskline receiver may use either scheme. node:crypto only.
import { createHmac } from "node:crypto";
import type { WebhookPayload, WebhookSecret } from "./core.js";
import { secretList } from "./core.js";
import { type SignOptions, signTimestamp } from "./sign-options.js";

/** The three headers of a Standard Webhooks delivery. */
export interface StandardWebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

const PREFIX = "whsec_";

/** The HMAC key: the base64 part of a `whsec_…` secret, decoded (the spec's key format). */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
}

/**
 * Produces the Standard Webhooks headers for a body: `webhook-signature` holds `v1,<base64>` of
 * HMAC-SHA256 over `<id>.<timestamp>.<body>`, keyed with the decoded secret, one per secret
 * (space-separated) during a rotation.
 *
 * @param id The message id (`webhook-id`): Deskline sends the event id, the same on every retry.
 * @param payload The exact body that will be sent.
 * @param secret The `whsec_…` secret, or several during a rotation.
 * @param options `timestamp` to sign with (default: now).
 */
export function signStandardWebhook(
  id: string,
  payload: WebhookPayload,
  secret: WebhookSecret,
  options?: SignOptions,
): StandardWebhookHeaders {
  const timestamp = String(signTimestamp(options));
  const signatures = secretList(secret).map((s) => {
    const mac = createHmac("sha256", keyOf(s)).update(`${id}.${timestamp}.`);
    const digest = (typeof payload === "string" ? mac.update(payload, "utf8") : mac.update(payload)).digest(
      "base64",
    );
    return `v1,${digest}`;
  });
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signatures.join(" ") };
}
