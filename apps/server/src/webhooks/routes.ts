import type { HttpSettings } from "../platform/config.js";
import type { RouteKit } from "../platform/http/route-kit.js";
import { adminDeliveryRoutes, deliveryRoutes } from "./deliveries/routes.js";
import { testEventRoutes } from "./deliveries/test-event.js";
import { adminWebhookEndpointRoutes, webhookEndpointRoutes } from "./endpoints/routes.js";
import { bulkResendRoutes } from "./recovery/bulk-resend.js";
import { recoveryRoutes } from "./recovery/routes.js";
import type { WebhookSettings } from "./settings.js";
import type { WebhookStores } from "./stores.js";

/** Mounts the routes of the webhook rooms (endpoints, deliveries, recovery) in one call each for the app. */
export function webhookRoutes(kit: RouteKit<WebhookStores, WebhookSettings & HttpSettings>): void {
  webhookEndpointRoutes(kit);
  deliveryRoutes(kit);
  testEventRoutes(kit);
  recoveryRoutes(kit);
  bulkResendRoutes(kit);
}

/** The operator's routes over webhook endpoints of any workspace. */
export function adminWebhookRoutes(kit: RouteKit<WebhookStores>): void {
  adminWebhookEndpointRoutes(kit);
  adminDeliveryRoutes(kit);
}
