import { schemaDefaults } from "@deskline/spec/values";
import { AppError } from "../../platform/errors.js";
import type { Handler } from "../../platform/http/operation.js";
import { parsePage, toPage } from "../../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import type { Schema } from "../../spec/types.js";
import type { WebhookSettings } from "../settings.js";
import { refusedUrlHost } from "./address-policy.js";
import { shownSecret } from "./secrets/signing-keys.js";
import { toWebhookEndpoint, type WebhookEndpointDoc, type WebhookEndpoints } from "./store.js";

// The default rotation grace (docs/decisions.md, "Webhook endpoints"): the old secret signs alongside the new one for a
// day, the spec's `WebhookEndpointSecretRotation.expires_in` default.
const DEFAULT_GRACE_SECONDS = schemaDefaults.WebhookEndpointSecretRotation.expires_in;

type RecentDeliveries = Schema<"WebhookEndpointRecentDeliveries">;

/**
 * What the list reads of the deliveries store (webhooks/deliveries/store.ts `recentOf`), named
 * here by what it answers so that endpoints, which deliveries build on, import nothing of them.
 */
interface RecentDeliveriesReader {
  recentOf(workspaceId: string, endpointIds: string[]): Promise<Map<string, RecentDeliveries>>;
}

type Kit = RouteKit<
  { webhookEndpoints: WebhookEndpoints; webhookDeliveries: RecentDeliveriesReader },
  WebhookSettings
>;

/**
 * The spec's webhook endpoint operations: what receivers expect from Stripe and Svix (get, PATCH, secret rotation). The
 * secret appears only in the answers of create and rotate (`null` for an Ed25519 endpoint, whose
 * private key no answer shows); every other answer omits it.
 */
export function webhookEndpointRoutes(kit: Kit): void {
  mountHandlers(kit, {
    listWebhookEndpoints,
    createWebhookEndpoint,
    getWebhookEndpoint,
    updateWebhookEndpoint,
    rotateWebhookEndpointSecret,
    deleteWebhookEndpoint,
  });
}

/**
 * docs/design.md, Conversations and admin: the operator's view of webhook endpoints of any workspace: re-enable one that
 * deliveries disabled.
 */
export function adminWebhookEndpointRoutes(kit: RouteKit<{ webhookEndpoints: WebhookEndpoints }>): void {
  mountHandlers(kit, { enableWebhookEndpoint });
}

function enableWebhookEndpoint({
  store,
}: RouteKit<{ webhookEndpoints: WebhookEndpoints }>): Handler<"enableWebhookEndpoint"> {
  return async ({ id }) => ({
    status: 200,
    body: toWebhookEndpoint(await store.webhookEndpoints.enable(id)),
  });
}

/**
 * An IP-literal URL in a refused range is refused at once (docs/decisions.md "Webhook address
 * policy"); a host name is checked when each attempt connects (webhooks/delivery/http-client.ts).
 */
function checkUrl(url: string | undefined, { webhookAllowPrivateNetworks }: Kit["config"]): void {
  if (url === undefined) return;
  // RFC 3986 (the spec's `format: uri`) takes hosts such as 999.1.1.1 that no delivery can reach.
  if (!URL.canParse(url)) {
    throw new AppError(400, "parameter_invalid", "`url` is not a URL deliveries can be sent to.", {
      param: "url",
    });
  }
  checkScheme(new URL(url), webhookAllowPrivateNetworks);
  if (webhookAllowPrivateNetworks) return;
  const refused = refusedUrlHost(url);
  if (refused) {
    throw new AppError(
      400,
      "url_address_refused",
      `Webhooks may not be sent to ${new URL(url).hostname} (${refused}); use a publicly reachable host.`,
      { param: "url" },
    );
  }
}

/** Hosts that are this machine: a development receiver (`deskline listen`, a local server). */
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/**
 * `https:` always; `http:` only to loopback and only where private networks are allowed (a
 * development server): a receiver on the developer's own machine needs no certificate, and no
 * production deployment ever sends a payload in the clear (docs/decisions.md, "Local receivers").
 */
function checkScheme(url: URL, allowPrivateNetworks: boolean): void {
  if (url.protocol === "https:") return;
  const local = allowPrivateNetworks && url.protocol === "http:" && LOOPBACK.test(url.hostname);
  if (local) return;
  const why = allowPrivateNetworks
    ? "`http://` is accepted only to this machine (127.0.0.1, [::1] or localhost)"
    : "`http://` is accepted only by a development server (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), to this machine";
  throw new AppError(400, "parameter_invalid", `\`url\` must be an https:// URL; ${why}.`, { param: "url" });
}

function listWebhookEndpoints({ store }: Kit): Handler<"listWebhookEndpoints"> {
  return async ({ ctx, query }) => {
    const page = parsePage(query);
    const workspaceId = workspaceOf(ctx);
    const docs = await store.webhookEndpoints.list(workspaceId, page);
    const shown = docs.slice(0, page.limit).map((doc) => doc._id);
    const recent = await store.webhookDeliveries.recentOf(workspaceId, shown);
    return {
      status: 200,
      body: toPage(docs, page.limit, (doc) => ({
        ...toWebhookEndpoint(doc),
        recent_deliveries: recent.get(doc._id) as RecentDeliveries,
      })),
    };
  };
}

function createWebhookEndpoint({ store, config }: Kit): Handler<"createWebhookEndpoint"> {
  return async ({ ctx, body }) => {
    checkUrl(body.url, config);
    const { doc, secret } = await store.webhookEndpoints.create(workspaceOf(ctx), body);
    return { status: 201, body: withSecret(doc, secret) };
  };
}

function getWebhookEndpoint({ store }: Kit): Handler<"getWebhookEndpoint"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: toWebhookEndpoint(await store.webhookEndpoints.get(workspaceOf(ctx), id)),
  });
}

function updateWebhookEndpoint({ store, config }: Kit): Handler<"updateWebhookEndpoint"> {
  return async ({ ctx, id, body }) => {
    checkUrl(body.url, config);
    const doc = await store.webhookEndpoints.update(workspaceOf(ctx), id, body);
    return { status: 200, body: toWebhookEndpoint(doc) };
  };
}

function rotateWebhookEndpointSecret({ store }: Kit): Handler<"rotateWebhookEndpointSecret"> {
  return async ({ ctx, id, body }) => {
    const graceMs = (body.expires_in ?? DEFAULT_GRACE_SECONDS) * 1000;
    const { doc, secret } = await store.webhookEndpoints.rotateSecret(
      workspaceOf(ctx),
      id,
      graceMs,
      body.signing,
    );
    return { status: 200, body: withSecret(doc, secret) };
  };
}

function deleteWebhookEndpoint({ store }: Kit): Handler<"deleteWebhookEndpoint"> {
  return async ({ ctx, id }) => {
    await store.webhookEndpoints.delete(workspaceOf(ctx), id);
    return { status: 200, body: { id, object: "webhook_endpoint", deleted: true } };
  };
}

/**
 * The one-time answer: the secret placed where the spec lists it, before the timestamps; `null`
 * when the endpoint's current key is an Ed25519 one (docs/decisions.md "Public-key signatures").
 */
function withSecret(doc: WebhookEndpointDoc, secret: string): Schema<"WebhookEndpointWithSecret"> {
  const { created_at, updated_at, ...rest } = toWebhookEndpoint(doc);
  const shown = shownSecret({ secret, public_key: doc.secrets[0]?.public_key ?? null });
  return { ...rest, secret: shown, created_at, updated_at };
}
