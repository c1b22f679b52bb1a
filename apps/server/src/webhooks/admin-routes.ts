import { notFound } from "../platform/errors.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import type { RouteKit } from "../platform/http/route-kit.js";
import { toDeliveryAttempt } from "./attempts.js";
import { toWebhookEndpoint } from "./endpoints.js";
import type { WebhookStores } from "./stores.js";

/**
 * docs/design.md, Conversations and admin: the operator's view of webhook endpoints of any workspace: re-enable one that
 * deliveries disabled, and read its delivery attempts.
 */
export function adminWebhookRoutes({ op, store }: RouteKit<WebhookStores>): void {
  op("enableWebhookEndpoint", async ({ id }) => ({
    status: 200,
    body: toWebhookEndpoint(await store.webhookEndpoints.enable(id)),
  }));

  op("listDeliveryAttempts", async ({ id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.find(id);
    if (!endpoint) throw notFound("webhook endpoint", id);
    const docs = await store.deliveryAttempts.list(endpoint, page);
    return { status: 200, body: toPage(docs, page.limit, toDeliveryAttempt) };
  });
}
