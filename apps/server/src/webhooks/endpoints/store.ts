import { isDeepStrictEqual } from "node:util";
import { schemaDefaults } from "@deskline/spec/values";
import type { Collection, Db } from "mongodb";
import { isOperational, receives, type StoredEvent } from "../../events/model.js";
import type { EventRelay } from "../../events/outbox-relay.js";
import { newestFirst, type Page } from "../../platform/database/lists.js";
import { concurrentUpdate, DomainError, notFound } from "../../platform/errors.js";
import { newId } from "../../platform/ids.js";
import { MutableRecords } from "../../records/record.js";
import type { BodyOf, Schema } from "../../spec/types.js";
import type { Limits } from "../settings.js";
import { type CustomHeader, checkHeaderNames, mergeHeaders } from "./custom-headers.js";
import type { WebhookEndpointDoc } from "./document.js";
import { checkFilter, passesFilter } from "./filter.js";
import {
  failureUpdates,
  type HealthDoc,
  type HealthRules,
  type HealthUpdate,
  operationalEvent,
  ownerDisabledEvent,
  successUpdates,
} from "./health.js";
import { LaneLeases } from "./lanes.js";
import { type EndpointSecret, SecretsAtRest, secretBinding } from "./secrets/at-rest.js";
import { type NewSigningKey, newSigningKey, type Signing, signingOf } from "./secrets/signing-keys.js";
import { nextSubscriptions } from "./subscriptions.js";

/**
 * The `webhook_endpoints` collection (docs/design.md, Webhook delivery): where a workspace wants its
 * events, which types, whether deliveries are on, the signing secrets and the custom headers.
 * Secrets never leave this module except as the one-time answer of create and rotate, and for
 * signing deliveries; header values only for deliveries. With SECRETS_ENCRYPTION_KEY both are
 * stored sealed, and sealed and opened by webhooks/endpoints/secrets/at-rest.ts only.
 */

export type { EndpointStatus, WebhookEndpointDoc } from "./document.js";

export type WebhookEndpointInput = BodyOf<"createWebhookEndpoint">;
export type WebhookEndpointPatch = BodyOf<"updateWebhookEndpoint">;

/** The fields that put an endpoint back to work: by its owner's PATCH or the admin `enable`. */
const ENABLED = {
  status: "enabled",
  disabled_at: null,
  disabled_reason: null,
  consecutive_failures: 0,
} as const;

/** The API shape; the secrets are never part of it. */
/**
 * What a resend, a recovery or a test event answers for an endpoint that is not enabled: each sends
 * only to enabled endpoints, and says how to enable this one.
 */
export function endpointDisabled(endpoint: Pick<WebhookEndpointDoc, "_id">, param: string): DomainError {
  return new DomainError(
    "conflict",
    "webhook_endpoint_disabled",
    `Webhook endpoint ${endpoint._id} is disabled; enable it (updateWebhookEndpoint with status "enabled") first.`,
    { param },
  );
}

export function toWebhookEndpoint(doc: WebhookEndpointDoc): Schema<"WebhookEndpoint"> {
  return {
    id: doc._id,
    object: "webhook_endpoint" as const,
    url: doc.url,
    description: doc.description,
    events: doc.events,
    status: doc.status,
    disabled_at: doc.disabled_at?.toISOString() ?? null,
    disabled_reason: doc.disabled_reason,
    consecutive_failures: doc.consecutive_failures,
    rate_limit: doc.rate_limit ?? null,
    filter: doc.filter ?? null,
    header_names: doc.custom_headers.map((header) => header.name),
    signing: signingOf(doc.secrets),
    public_key: doc.secrets[0]?.public_key ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/**
 * The secrets after a rotation: the new one first, older ones valid for at most `expiresInMs` more
 * (a second rotation shortens an earlier grace period, never lengthens it), expired ones dropped,
 * and at most `limit` in all (WEBHOOK_SECRETS_PER_ENDPOINT): past it the oldest grace periods end
 * now. Every attempt signs with each live secret, and receivers check at most so many
 * (docs/operations.md "Limits").
 */
export function rotateSecrets(
  current: EndpointSecret[],
  expiresInMs: number,
  now: Date,
  fresh: NewSigningKey = newSigningKey("hmac_sha256"),
  limit = Number.POSITIVE_INFINITY,
): EndpointSecret[] {
  const graceEnd = now.getTime() + expiresInMs;
  const kept = current
    .map((s) => ({
      ...s,
      expires_at: new Date(Math.min(s.expires_at?.getTime() ?? graceEnd, graceEnd)),
    }))
    .filter((s) => s.expires_at.getTime() > now.getTime());
  return [withPublicKey(fresh, null), ...kept].slice(0, Math.max(1, limit));
}

/** An entry of the secrets; HMAC ones keep no `public_key` field (as before key pairs existed). */
function withPublicKey(key: NewSigningKey, expiresAt: Date | null): EndpointSecret {
  return key.public_key
    ? { secret: key.secret, public_key: key.public_key, expires_at: expiresAt }
    : { secret: key.secret, expires_at: expiresAt };
}

// A rotation races only with another rotation of the same endpoint; a few tries settle it.
const ROTATION_TRIES = 5;

// Rounds of the health updates when the count moves between them (other workers counting).
const HEALTH_TRIES = 20;

const COLLECTION = "webhook_endpoints";

/** What the endpoint store needs beyond the database to report on endpoints' health. */
export interface EndpointHealthOptions {
  /** Relays the operational events recorded on endpoints (events/outbox-relay.ts). */
  relay?: EventRelay;
  /** WEBHOOK_ENDPOINTS_PER_WORKSPACE and WEBHOOK_SECRETS_PER_ENDPOINT (docs/operations.md "Limits"). */
  limits?: Pick<Limits, "endpointsPerWorkspace" | "secretsPerEndpoint">;
  rules?: HealthRules;
  /** A delivery as the API shows it, for `webhook_delivery.failed` (webhooks/deliveries/store.ts). */
  readDelivery?: (id: string) => Promise<Schema<"WebhookDelivery"> | null>;
}

export class WebhookEndpoints extends MutableRecords<WebhookEndpointDoc> {
  /** Who runs each endpoint's delivery lane: the lease kept on its document (lanes.ts). */
  readonly lanes: LaneLeases;
  private readonly rules: HealthRules;
  private readonly readDelivery: NonNullable<EndpointHealthOptions["readDelivery"]>;
  private readonly limits: NonNullable<EndpointHealthOptions["limits"]>;

  constructor(
    db: Db,
    /** Seals the secrets written (SECRETS_ENCRYPTION_KEY); without a key they stay plaintext. */
    readonly secrets: SecretsAtRest = new SecretsAtRest(),
    options: EndpointHealthOptions = {},
  ) {
    // Endpoints carry operational events until the relay moves them (health.ts).
    super({ db, collection: COLLECTION, noun: "webhook endpoint", relay: options.relay });
    this.lanes = new LaneLeases(this.collection);
    this.rules = options.rules ?? { failingAfter: 5 };
    this.readDelivery = options.readDelivery ?? (async () => null);
    this.limits = options.limits ?? { endpointsPerWorkspace: 100, secretsPerEndpoint: 5 };
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ workspace_id: 1, _id: -1 }, { name: "workspace_newest" });
  }

  /**
   * Registers an endpoint; returns it with its first secret (in the clear), which the caller
   * shows once when it is an HMAC one.
   */
  async create(
    workspaceId: string,
    input: WebhookEndpointInput,
  ): Promise<{ doc: WebhookEndpointDoc; secret: string }> {
    checkHeaderNames(input.headers ?? {});
    const filter = input.filter == null ? null : checkFilter(input.filter);
    await this.secrets.writesAllowed();
    const now = new Date();
    const key = newSigningKey(input.signing ?? schemaDefaults.WebhookEndpointCreate.signing);
    const secret = key.secret;
    const id = newId("we", now.getTime());
    await this.assertRoomFor(workspaceId, 0);
    const binding = secretBinding({ _id: id, workspace_id: workspaceId });
    const seal = (value: string) => this.secrets.seal(value, binding);
    const events = input.events ?? [...schemaDefaults.WebhookEndpointCreate.events];
    const doc: WebhookEndpointDoc = {
      _id: id,
      workspace_id: workspaceId,
      url: input.url,
      description: input.description ?? null,
      events,
      subscribed_at: Object.fromEntries(events.map((entry) => [entry, now])),
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      secrets: [withPublicKey({ ...key, secret: seal(secret) }, null)],
      rate_limit: input.rate_limit ?? null,
      filter,
      lane_holder: null,
      lane_until: null,
      custom_headers: mergeHeaders([], input.headers ?? {}, seal),
      version: 0,
      created_at: now,
      updated_at: now,
    };
    const stored = await this.insertNew(doc);
    // Checked again with this one in: of racing creates past the limit, none stays (not one too many).
    await this.assertRoomFor(workspaceId, 1).catch(async (error: unknown) => {
      await this.collection.deleteOne({ _id: id, workspace_id: workspaceId });
      throw error;
    });
    // A retried creation answers the first run's endpoint, and so its secret.
    if (stored === doc) return { doc, secret };
    const first = stored.secrets[0]?.secret;
    return { doc: stored, secret: first ? this.secrets.open(first, secretBinding(stored)) : secret };
  }

  /**
   * Refuses a create past WEBHOOK_ENDPOINTS_PER_WORKSPACE: each event is written once per endpoint
   * and every endpoint is a destination the workers call (docs/operations.md "Limits").
   * `including`: how many of the counted are the create's own.
   */
  private async assertRoomFor(workspaceId: string, including: number): Promise<void> {
    const limit = this.limits.endpointsPerWorkspace;
    const count = await this.collection.countDocuments({ workspace_id: workspaceId }, { limit: limit + 1 });
    if (count - including < limit) return;
    throw new DomainError(
      "conflict",
      "webhook_endpoint_limit_reached",
      `This workspace has ${limit} webhook endpoints, the most it may have (WEBHOOK_ENDPOINTS_PER_WORKSPACE); ` +
        "delete one, or point one at a receiver that fans out.",
    );
  }

  /** A page of the workspace's endpoints, newest first, one more than asked for `has_more`. */
  list(workspaceId: string, page: Page): Promise<WebhookEndpointDoc[]> {
    return newestFirst(this.collection, workspaceId, {}, page);
  }

  /**
   * Applies a PATCH: only the fields sent and different from the stored ones are written (so a
   * delivery's concurrent `$inc` of `consecutive_failures` is never overwritten, except by an
   * enable, which resets it on purpose). Enabling clears the disabled stamps; disabling by the
   * owner sets them.
   */
  async update(workspaceId: string, id: string, patch: WebhookEndpointPatch): Promise<WebhookEndpointDoc> {
    if (patch.headers !== undefined) {
      checkHeaderNames(patch.headers);
      await this.secrets.writesAllowed();
    }
    if (patch.filter != null) checkFilter(patch.filter);
    type Patched = { doc: WebhookEndpointDoc; event?: StoredEvent };
    const patched = await this.updateInWorkspace<Patched>(workspaceId, id, async (current) => {
      const now = new Date();
      const set: Partial<WebhookEndpointDoc> = {};
      for (const field of ["url", "description", "events", "rate_limit", "filter"] as const) {
        if (patch[field] !== undefined && !isDeepStrictEqual(patch[field], current[field] ?? null)) {
          (set as Record<string, unknown>)[field] = patch[field];
        }
      }
      if (set.events) set.subscribed_at = nextSubscriptions(current, set.events, now);
      const headers = patch.headers && this.mergedHeaders(current, patch.headers);
      if (headers) set.custom_headers = headers;
      if (patch.status === "enabled" && current.status === "disabled") {
        Object.assign(set, ENABLED);
      } else if (patch.status === "disabled" && current.status === "enabled") {
        Object.assign(set, {
          status: "disabled",
          disabled_at: now,
          disabled_reason: "owner",
        });
      }
      if (Object.keys(set).length === 0) return { result: { doc: current } };
      set.updated_at = now;
      const version = current.version + 1;
      const doc = { ...current, ...set, version };
      // Disabling by the owner says so too (`webhook_endpoint.disabled`, reason `owner`), in the
      // same write.
      const event =
        set.status === "disabled" ? ownerDisabledEvent(workspaceId, toWebhookEndpoint(doc), now) : undefined;
      return { set, event, result: { doc, event } };
    });
    return patched.doc;
  }

  /**
   * The stored headers after a PATCH's `headers`, or undefined when they would not change (the
   * values compared opened: sealing the same value twice gives different bytes).
   */
  private mergedHeaders(
    current: WebhookEndpointDoc,
    patch: Record<string, string | null>,
  ): CustomHeader[] | undefined {
    const context = secretBinding(current);
    const opened = current.custom_headers.map((h) => ({
      name: h.name,
      value: this.secrets.open(h.value, context),
    }));
    const next = mergeHeaders(opened, patch, (value) => value);
    if (isDeepStrictEqual(next, opened)) return undefined;
    return next.map((h) => ({ name: h.name, value: this.secrets.seal(h.value, context) }));
  }

  /**
   * Makes a new current secret (or key pair) of `signing`, by default the endpoint's own scheme;
   * the previous ones stay valid for `expiresInMs`. The write only matches while the current
   * secret is still the one this rotation read, so two racing rotations cannot both keep their
   * own new secret.
   */
  async rotateSecret(
    workspaceId: string,
    id: string,
    expiresInMs: number,
    signing?: Signing,
  ): Promise<{ doc: WebhookEndpointDoc; secret: string }> {
    await this.secrets.writesAllowed();
    for (let attempt = 0; attempt < ROTATION_TRIES; attempt++) {
      const current = await this.get(workspaceId, id);
      const now = new Date();
      const key = newSigningKey(signing ?? signingOf(current.secrets));
      const secret = key.secret;
      const sealed = { ...key, secret: this.secrets.seal(secret, secretBinding(current)) };
      const secrets = rotateSecrets(
        current.secrets,
        expiresInMs,
        now,
        sealed,
        this.limits.secretsPerEndpoint,
      );
      const rotated = await this.collection.findOneAndUpdate(
        { _id: id, workspace_id: workspaceId, "secrets.0.secret": current.secrets[0]?.secret },
        { $set: { secrets, updated_at: now } },
        { returnDocument: "after" },
      );
      if (rotated) return { doc: rotated, secret };
    }
    throw concurrentUpdate("webhook endpoint");
  }

  /**
   * The enabled endpoints of the event's workspace that receive it: subscribed to its type
   * (directly or with `*`), passed by their content filter, and not the endpoint an operational
   * event is about.
   */
  async receiversOf(
    event: Pick<StoredEvent, "workspace_id" | "type" | "about_endpoint_id" | "payload">,
  ): Promise<WebhookEndpointDoc[]> {
    const enabled = await this.enabledIn([event.workspace_id]);
    return enabled.filter((endpoint) => receives(endpoint, event) && passesFilter(endpoint, event));
  }

  /** The enabled endpoints of these workspaces, whatever they subscribe to. */
  enabledIn(workspaceIds: string[]): Promise<WebhookEndpointDoc[]> {
    if (workspaceIds.length === 1) {
      return this.collection.find({ workspace_id: workspaceIds[0] as string, status: "enabled" }).toArray();
    }
    return this.collection.find({ workspace_id: { $in: workspaceIds }, status: "enabled" }).toArray();
  }

  /** An endpoint of any workspace (deliveries and the admin API), or null. */
  find(id: string): Promise<WebhookEndpointDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** The admin `enable`: as the owner's `{status: "enabled"}`, for an endpoint of any workspace. */
  /** Disabled endpoints by why: by their owner (PATCHed) or after repeated failures. */
  async countDisabled(): Promise<{ owner: number; failures: number }> {
    const all = await this.collection.countDocuments({ status: "disabled" });
    const owner = await this.collection.countDocuments({
      status: "disabled",
      disabled_reason: "owner",
    });
    return { owner, failures: all - owner };
  }

  async enable(id: string): Promise<WebhookEndpointDoc> {
    const enabled = await this.collection.findOneAndUpdate(
      { _id: id, status: "disabled" },
      { $set: { ...ENABLED, updated_at: new Date() }, $inc: { version: 1 } },
      { returnDocument: "after" },
    );
    const doc = enabled ?? (await this.find(id));
    if (!doc) throw notFound("webhook endpoint", id);
    return doc;
  }

  /**
   * A delivery to `endpoint` (as the lane read it) succeeded: the consecutive failures start again
   * from 0, and a failing streak ends with `webhook_endpoint.recovered` (health.ts).
   */
  async deliverySucceeded(endpoint: WebhookEndpointDoc, deliveryId: string, now = new Date()): Promise<void> {
    const state = toWebhookEndpoint(endpoint);
    const candidates = successUpdates(endpoint.workspace_id, state, this.rules, deliveryId, now);
    await this.applyFirst(endpoint._id, candidates, () => this.counted(endpoint._id, deliveryId));
  }

  /** Whether the endpoint counted the delivery already, or is gone: nothing more to count. */
  private async counted(id: string, deliveryId: string): Promise<boolean> {
    const current = await this.collection.findOne({ _id: id }, { projection: { counted_deliveries: 1 } });
    return !current || (current.counted_deliveries ?? []).includes(deliveryId);
  }

  /**
   * A delivery to `endpoint` failed (its last attempt did): one more consecutive failure, with
   * `webhook_delivery.failed`, `webhook_endpoint.failing` at the warning and, at the limit, the
   * endpoint disabled with `webhook_endpoint.disabled` (health.ts). Returns true when this
   * failure disabled the endpoint.
   */
  async deliveryFailed(endpoint: WebhookEndpointDoc, deliveryId: string, now = new Date()): Promise<boolean> {
    const delivery = await this.readDelivery(deliveryId);
    // Not for a delivery of an operational event: endpoints that are down would otherwise tell
    // each other of every failure (docs/decisions.md, "Operational events").
    const failedEvent =
      delivery?.status === "failed" && !isOperational(delivery.event_type)
        ? operationalEvent(endpoint.workspace_id, endpoint._id, "webhook_delivery.failed", delivery, now)
        : undefined;
    const state = toWebhookEndpoint(endpoint);
    const counting = { id: deliveryId, failedEvent };
    const candidates = failureUpdates(endpoint.workspace_id, state, this.rules, counting, now);
    const applied = await this.applyFirst(endpoint._id, candidates, () =>
      this.counted(endpoint._id, deliveryId),
    );
    return applied?.disables === true;
  }

  /**
   * Applies the first of `candidates` whose condition holds, then relays its events. Their
   * conditions cover every state between them, so none applies only when another worker moved
   * the count between two of them: then round again, unless `settled` says there is nothing to do.
   */
  private async applyFirst(
    id: string,
    candidates: HealthUpdate[],
    settled: () => Promise<boolean>,
  ): Promise<HealthUpdate | undefined> {
    // The updates name only the health fields (health.ts), written through that view.
    const health: Pick<Collection<HealthDoc>, "updateOne"> = this.collection;
    for (let round = 0; round < HEALTH_TRIES; round++) {
      for (const candidate of candidates) {
        if ((await health.updateOne(candidate.filter, candidate.update)).matchedCount === 0) continue;
        if (candidate.events.length > 0) await this.relayed(id, candidate.events);
        return candidate;
      }
      if (await settled()) return undefined;
    }
    return undefined;
  }
}
