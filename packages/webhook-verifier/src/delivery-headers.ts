// The headers of one webhook delivery as Deskline sends it (docs/design.md, Webhook delivery): both
// signature schemes, signed anew for each attempt. The server's deliveries and `deskline listen`
// build them here, so a receiver that verifies one verifies the other. node:crypto only.
import type { WebhookSecret } from "./core.js";
import type { SignOptions } from "./sign-options.js";
import { signStandardWebhook } from "./standard-webhooks.js";
import { signPayload } from "./verify.js";

/** One event to deliver. */
export interface DeliveryToSign {
  /** The event's stored JSON, sent byte for byte. */
  payload: string;
  eventId: string;
  eventType: string;
  /** The endpoint's secret, or every secret valid now during a rotation (one `v1` each). */
  secret: WebhookSecret;
  /** E.g. `Deskline-Webhooks/1.2.0`. */
  userAgent: string;
}

/**
 * Every header of a delivery: `Service-Signature`, `Service-Event`, `Service-Delivery` and the
 * Standard Webhooks trio, plus the content type and user agent. `options.timestamp` as for
 * {@link signPayload} (default: now).
 */
export function deliveryHeaders(delivery: DeliveryToSign, options?: SignOptions): Record<string, string> {
  const { payload, eventId, secret } = delivery;
  return {
    "content-type": "application/json",
    "user-agent": delivery.userAgent,
    "service-signature": signPayload(payload, secret, { ...options, id: eventId }),
    "service-event": delivery.eventType,
    "service-delivery": eventId,
    ...signStandardWebhook(eventId, payload, secret, options),
  };
}
