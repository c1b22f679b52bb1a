import { toDeliveryAttempt } from "../db/delivery-attempts.js";
import { toWebhookEndpoint } from "../db/webhook-endpoints.js";
import { parsePage, toPage } from "../http/paging.js";
import type { Schema } from "../spec/types.js";
import { type RouteKit, workspaceOf } from "./kit.js";

// DESIGN.md §6's default: the old secret signs alongside the new one for a day.
const DEFAULT_GRACE_SECONDS = 86_400;

/**
 * Seed §4.4 plus what receivers expect from Stripe and Svix (get, PATCH, secret rotation). The
 * secret appears only in the answers of create and rotate; every other answer omits it.
 */
export function webhookEndpointRoutes({ op, store }: RouteKit): void {
  op("listWebhookEndpoints", async ({ ctx, query }) => {
    const page = parsePage(query);
    const docs = await store.webhookEndpoints.list(workspaceOf(ctx), page);
    return { status: 200, body: toPage(docs, page.limit, toWebhookEndpoint) };
  });

  op("createWebhookEndpoint", async ({ ctx, body }) => {
    const { doc, secret } = await store.webhookEndpoints.create(workspaceOf(ctx), body);
    return { status: 201, body: withSecret(toWebhookEndpoint(doc), secret) };
  });

  op("getWebhookEndpoint", async ({ ctx, id }) => ({
    status: 200,
    body: toWebhookEndpoint(await store.webhookEndpoints.get(workspaceOf(ctx), id)),
  }));

  op("updateWebhookEndpoint", async ({ ctx, id, body }) => ({
    status: 200,
    body: toWebhookEndpoint(await store.webhookEndpoints.update(workspaceOf(ctx), id, body)),
  }));

  op("rotateWebhookEndpointSecret", async ({ ctx, id, body }) => {
    const graceMs = (body.expires_in ?? DEFAULT_GRACE_SECONDS) * 1000;
    const { doc, secret } = await store.webhookEndpoints.rotateSecret(workspaceOf(ctx), id, graceMs);
    return { status: 200, body: withSecret(toWebhookEndpoint(doc), secret) };
  });

  op("listWebhookEndpointAttempts", async ({ ctx, id, query }) => {
    const page = parsePage(query);
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    const docs = await store.deliveryAttempts.list(endpoint, page);
    return { status: 200, body: toPage(docs, page.limit, toDeliveryAttempt) };
  });

  op("deleteWebhookEndpoint", async ({ ctx, id }) => {
    await store.webhookEndpoints.delete(workspaceOf(ctx), id);
    return { status: 200, body: { id, object: "webhook_endpoint", deleted: true } };
  });
}

/** The one-time answer: the secret placed where the spec lists it, before the timestamps. */
function withSecret(
  endpoint: Schema<"WebhookEndpoint">,
  secret: string,
): Schema<"WebhookEndpointWithSecret"> {
  const { created_at, updated_at, ...rest } = endpoint;
  return { ...rest, secret, created_at, updated_at };
}
