import type { RecordDoc } from "../../records/record.js";
import type { Schema } from "../../spec/types.js";
import type { CustomHeader } from "./custom-headers.js";
import type { EventFilter } from "./filter.js";
import type { EndpointSecret } from "./secrets/at-rest.js";

/**
 * An endpoint as stored in `webhook_endpoints`: the store (store.ts) reads and writes it, and the
 * lanes' leases (lanes.ts) their two fields of it; kept apart so that both name it without
 * importing each other.
 */

export type EndpointStatus = Schema<"WebhookEndpointStatus">;
export type DisabledReason = NonNullable<Schema<"WebhookEndpointDisabledReason">>;
type Subscription = Schema<"EventSubscription">;

/**
 * A mutable record like the others (records/record.ts): looked up in its workspace, PATCHed by a
 * version-checked update, deleted in its workspace.
 */
export interface WebhookEndpointDoc extends RecordDoc {
  url: string;
  description: string | null;
  /** Subscribed event types, or `["*"]` for all. */
  events: Subscription[];
  /**
   * When each entry of `events` began (subscriptions.ts): a recovery sends no event older than
   * that. Absent on endpoints made before it was kept: they count from `created_at`.
   */
  subscribed_at?: Record<string, Date>;
  status: EndpointStatus;
  disabled_at: Date | null;
  /** Why it is disabled (docs/decisions.md, "Why an endpoint is disabled: a code"); null while enabled. */
  disabled_reason: DisabledReason | null;
  consecutive_failures: number;
  /** Newest first: the first is the current secret, the others are in their grace period. */
  secrets: EndpointSecret[];
  /**
   * Sent with every delivery (webhooks/endpoints/custom-headers.ts), sorted by name; each value sealed like
   * the secrets (same context). Empty when it sends none (migration 005 gave it to older endpoints).
   */
  custom_headers: CustomHeader[];
  /** Deliveries per second at most, or null for no limit (webhooks/delivery/pace.ts). */
  rate_limit: number | null;
  /** The content filter events must pass (webhooks/endpoints/filter.ts); absent or null: none. */
  filter?: EventFilter | null;
  /**
   * The endpoint's lane (webhooks/endpoints/lanes.ts): the worker running it, and until when
   * nobody else may: its lease while held, the earliest next start once let go. Never in the API.
   */
  lane_holder?: string | null;
  lane_until?: Date | null;
  /** The latest deliveries whose outcome its health counted (webhooks/endpoints/health.ts). Never in the API. */
  counted_deliveries?: string[];
}
