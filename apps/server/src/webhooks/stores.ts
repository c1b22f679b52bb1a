import type { Events } from "../events/events.js";
import type { DeliveryAttempts } from "./deliveries/attempts.js";
import type { DeliveryQueue } from "./deliveries/queue.js";
import type { WebhookDeliveries } from "./deliveries/store.js";
import type { SecretsAtRest } from "./endpoints/secrets/at-rest.js";
import type { WebhookEndpoints } from "./endpoints/store.js";
import type { RecoveryStores } from "./recovery/store.js";

/**
 * The stores the webhook machinery reaches: its routes, recovery and the delivery worker. The
 * composition root's `Store` (store.ts) holds them all; naming only these keeps the arrows
 * pointing down, from webhooks to the events below them and never up to the root.
 */
export interface WebhookStores extends RecoveryStores {
  webhookEndpoints: WebhookEndpoints;
  webhookDeliveries: WebhookDeliveries;
  deliveryAttempts: DeliveryAttempts;
  deliveryQueue: DeliveryQueue;
  events: Events;
  /** Opens the secrets and header values deliveries sign with and send. */
  secrets: SecretsAtRest;
}
