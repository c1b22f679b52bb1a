// The headers of a forwarded event: the ones the server's webhook delivery sends (DESIGN.md §6,
// seed §6.2), signed with the verifier's own signers, so a receiver that verifies server
// deliveries verifies these with no change but the secret.
import { signPayload, signStandardWebhook } from "@deskline/webhook-verifier";
import { VERSION } from "../version.js";

/** As the server's `Deskline-Webhooks/<version>`. */
export const USER_AGENT = `Deskline-Webhooks/${VERSION}`;

export interface SignedEvent {
  payload: string;
  eventId: string;
  eventType: string;
  secret: string;
}

/** Every header of one attempt signed at `now` (each attempt is signed anew, as the server does). */
export function deliveryHeaders(event: SignedEvent, now: Date): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "service-signature": signPayload(event.payload, event.secret, { timestamp: now }),
    "service-event": event.eventType,
    "service-delivery": event.eventId,
    ...signStandardWebhook(event.eventId, event.payload, event.secret, { timestamp: now }),
  };
}
