import { notFound } from "../platform/errors.js";
import type { Handler } from "../platform/http/operation.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit } from "../platform/http/route-kit.js";
import { toDeliveryAttempt } from "./attempts.js";
import { toWebhookEndpoint } from "./endpoints.js";
import type { WebhookStores } from "./stores.js";

type Kit = RouteKit<WebhookStores>;

/**
 * docs/design.md, Conversations and admin: the operator's view of webhook endpoints of any workspace: re-enable one that
 * deliveries disabled, and read its delivery attempts.
 */
export function adminWebhookRoutes(kit: Kit): void {
  mountHandlers(kit, { enableWebhookEndpoint, listDeliveryAttempts });
}

function enableWebhookEndpoint({ store }: Kit): Handler<"enableWebhookEndpoint"> {
  return async ({ id }) => ({
    status: 200,
    body: toWebhookEndpoint(await store.webhookEndpoints.enable(id)),
  });
}

function listDeliveryAttempts({ store }: Kit): Handler<"listDeliveryAttempts"> {
  return async ({ id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.find(id);
    if (!endpoint) throw notFound("webhook endpoint", id);
    const docs = await store.deliveryAttempts.list(endpoint, page);
    return { status: 200, body: toPage(docs, page.limit, toDeliveryAttempt) };
  };
}
