import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { Collection, Db } from "mongodb";
import { isSubscribed } from "../domain/events.js";
import { newId } from "../domain/ids.js";
import { concurrentUpdate, notFound } from "../errors.js";
import type { BodyOf, Schema } from "../spec/types.js";
import { newestFirst, type Page } from "./lists.js";
import { insertNew } from "./records.js";

/**
 * The `webhook_endpoints` collection (seed §2.4, DESIGN.md §6): where a workspace wants its
 * events, which types, whether deliveries are on, and the signing secrets. Secrets never leave
 * this module except as the one-time answer of create and rotate, and for signing deliveries.
 */

export type EndpointStatus = Schema<"WebhookEndpointStatus">;
type Subscription = Schema<"EventSubscription">;

/** A signing secret; `expires_at` null for the current one, set for one being rotated out. */
export interface EndpointSecret {
  secret: string;
  expires_at: Date | null;
}

export interface WebhookEndpointDoc {
  _id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** Subscribed event types, or `["*"]` for all. */
  events: Subscription[];
  status: EndpointStatus;
  disabled_at: Date | null;
  disabled_reason: string | null;
  consecutive_failures: number;
  /** Newest first: the first is the current secret, the others are in their grace period. */
  secrets: EndpointSecret[];
  created_at: Date;
  updated_at: Date;
}

export type WebhookEndpointInput = BodyOf<"createWebhookEndpoint">;
export type WebhookEndpointPatch = BodyOf<"updateWebhookEndpoint">;

export const OWNER_DISABLED_REASON = "disabled by the owner";

/** Seed §8: consecutive failed deliveries after which an endpoint is disabled. */
export const DISABLE_AFTER_FAILURES = 15;
export const FAILURES_DISABLED_REASON = `${DISABLE_AFTER_FAILURES} consecutive failed deliveries`;

/** The fields that put an endpoint back to work: by its owner's PATCH or the admin `enable`. */
const ENABLED = {
  status: "enabled",
  disabled_at: null,
  disabled_reason: null,
  consecutive_failures: 0,
} as const;

/** The API shape; the secrets are never part of it. */
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
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** `whsec_` + 32 random bytes, base64 (DESIGN.md §6). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** The secrets deliveries sign with at `now`: the current one and those still in their grace period. */
export function signingSecrets(doc: Pick<WebhookEndpointDoc, "secrets">, now = new Date()): string[] {
  return doc.secrets
    .filter((s) => s.expires_at === null || s.expires_at.getTime() > now.getTime())
    .map((s) => s.secret);
}

/**
 * The secrets after a rotation: the new one first, older ones valid for at most `expiresInMs` more
 * (a second rotation shortens an earlier grace period, never lengthens it), expired ones dropped.
 */
export function rotateSecrets(current: EndpointSecret[], expiresInMs: number, now: Date): EndpointSecret[] {
  const graceEnd = now.getTime() + expiresInMs;
  const kept = current
    .map((s) => ({
      secret: s.secret,
      expires_at: new Date(Math.min(s.expires_at?.getTime() ?? graceEnd, graceEnd)),
    }))
    .filter((s) => s.expires_at.getTime() > now.getTime());
  return [{ secret: newSecret(), expires_at: null }, ...kept];
}

// A rotation races only with another rotation of the same endpoint; a few tries settle it.
const ROTATION_TRIES = 5;

export class WebhookEndpoints {
  readonly collection: Collection<WebhookEndpointDoc>;

  constructor(db: Db) {
    this.collection = db.collection<WebhookEndpointDoc>("webhook_endpoints");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ workspace_id: 1, _id: -1 }, { name: "workspace_newest" });
  }

  /** Registers an endpoint; returns it with its first secret, which the caller shows once. */
  async create(
    workspaceId: string,
    input: WebhookEndpointInput,
  ): Promise<{ doc: WebhookEndpointDoc; secret: string }> {
    const now = new Date();
    const secret = newSecret();
    const doc: WebhookEndpointDoc = {
      _id: newId("we", now.getTime()),
      workspace_id: workspaceId,
      url: input.url,
      description: input.description ?? null,
      events: input.events ?? ["*"],
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      secrets: [{ secret, expires_at: null }],
      created_at: now,
      updated_at: now,
    };
    const stored = await insertNew(this.collection, doc);
    // A retried creation answers the first run's endpoint, and so its secret.
    return { doc: stored, secret: stored.secrets[0]?.secret ?? secret };
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpointDoc> {
    const doc = await this.collection.findOne({ _id: id, workspace_id: workspaceId });
    if (!doc) throw notFound("webhook endpoint", id);
    return doc;
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
    const current = await this.get(workspaceId, id);
    const now = new Date();
    const set: Partial<WebhookEndpointDoc> = {};
    for (const field of ["url", "description", "events"] as const) {
      if (patch[field] !== undefined && !isDeepStrictEqual(patch[field], current[field])) {
        (set as Record<string, unknown>)[field] = patch[field];
      }
    }
    if (patch.status === "enabled" && current.status === "disabled") {
      Object.assign(set, ENABLED);
    } else if (patch.status === "disabled" && current.status === "enabled") {
      Object.assign(set, { status: "disabled", disabled_at: now, disabled_reason: OWNER_DISABLED_REASON });
    }
    if (Object.keys(set).length === 0) return current;
    set.updated_at = now;
    const updated = await this.collection.findOneAndUpdate(
      { _id: id, workspace_id: workspaceId },
      { $set: set },
      { returnDocument: "after" },
    );
    if (!updated) throw notFound("webhook endpoint", id); // deleted meanwhile
    return updated;
  }

  /**
   * Makes a new current secret; the previous ones stay valid for `expiresInMs`. The write only
   * matches while the current secret is still the one this rotation read, so two racing
   * rotations cannot both keep their own new secret.
   */
  async rotateSecret(
    workspaceId: string,
    id: string,
    expiresInMs: number,
  ): Promise<{ doc: WebhookEndpointDoc; secret: string }> {
    for (let attempt = 0; attempt < ROTATION_TRIES; attempt++) {
      const current = await this.get(workspaceId, id);
      const now = new Date();
      const secrets = rotateSecrets(current.secrets, expiresInMs, now);
      const rotated = await this.collection.findOneAndUpdate(
        { _id: id, workspace_id: workspaceId, "secrets.0.secret": current.secrets[0]?.secret },
        { $set: { secrets, updated_at: now } },
        { returnDocument: "after" },
      );
      if (rotated) return { doc: rotated, secret: secrets[0]?.secret as string };
    }
    throw concurrentUpdate("webhook endpoint");
  }

  /** The enabled endpoints of a workspace that subscribe to `type` (directly or with `*`). */
  async subscribedTo(workspaceId: string, type: string): Promise<WebhookEndpointDoc[]> {
    const enabled = await this.enabledIn([workspaceId]);
    return enabled.filter((endpoint) => isSubscribed(endpoint.events, type));
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
  async enable(id: string): Promise<WebhookEndpointDoc> {
    const enabled = await this.collection.findOneAndUpdate(
      { _id: id, status: "disabled" },
      { $set: { ...ENABLED, updated_at: new Date() } },
      { returnDocument: "after" },
    );
    const doc = enabled ?? (await this.find(id));
    if (!doc) throw notFound("webhook endpoint", id);
    return doc;
  }

  /** A delivery succeeded: the consecutive failures start again from 0. */
  async deliverySucceeded(id: string): Promise<void> {
    await this.collection.updateOne(
      { _id: id, consecutive_failures: { $ne: 0 } },
      { $set: { consecutive_failures: 0 } },
    );
  }

  /**
   * A delivery failed (its last attempt did): one more consecutive failure, and at exactly
   * DISABLE_AFTER_FAILURES the endpoint is disabled. Each step is one conditional single-document
   * update, so concurrent deliveries never lose a count and exactly one of them disables it.
   * Returns true when this failure disabled the endpoint.
   */
  async deliveryFailed(id: string, now = new Date()): Promise<boolean> {
    const below = await this.collection.updateOne(
      { _id: id, status: "enabled", consecutive_failures: { $lt: DISABLE_AFTER_FAILURES - 1 } },
      { $inc: { consecutive_failures: 1 } },
    );
    if (below.matchedCount === 1) return false;
    const disabled = await this.collection.updateOne(
      { _id: id, status: "enabled", consecutive_failures: { $gte: DISABLE_AFTER_FAILURES - 1 } },
      {
        $set: {
          status: "disabled",
          disabled_at: now,
          disabled_reason: FAILURES_DISABLED_REASON,
          consecutive_failures: DISABLE_AFTER_FAILURES,
          updated_at: now,
        },
      },
    );
    return disabled.matchedCount === 1;
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    const { deletedCount } = await this.collection.deleteOne({ _id: id, workspace_id: workspaceId });
    if (deletedCount === 0) throw notFound("webhook endpoint", id);
  }
}
