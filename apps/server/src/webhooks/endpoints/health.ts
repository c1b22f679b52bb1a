import type { Filter, UpdateFilter } from "mongodb";
import { newEvent, type StoredEvent } from "../../events/model.js";
import type { Schema } from "../../spec/types.js";
import type { DisabledReason } from "./document.js";

/**
 * The health of an endpoint and the operational events it speaks up with (docs/decisions.md,
 * "Operational events"): each failed delivery counts, the one that reaches `failingAfter` sends
 * `webhook_endpoint.failing`, the one that reaches 15 disables the endpoint and sends
 * `webhook_endpoint.disabled`, a success after `failingAfter` sends `webhook_endpoint.recovered`,
 * and every failed delivery sends `webhook_delivery.failed`.
 *
 * Stated as single-document conditional updates on the endpoint whose conditions do not overlap
 * (below the warning, at it, at the limit): of the workers that count failures of one endpoint
 * at once, exactly one moves the count across each threshold, so no streak sends an event twice.
 * Each event is pushed into the endpoint's `pending_events` by the very update that makes the
 * change it reports (events/outbox-relay.ts moves it to `events`), so a crash cannot lose it.
 * Each counts one delivery once: its id goes into the endpoint's `counted_deliveries` (the
 * latest COUNTED_KEPT) by the same update, which applies only while the id is not there, so two
 * workers counting the same outcome (webhooks/delivery/health-count.ts) count it once.
 * Pure: WebhookEndpoints (store.ts) runs the updates, in order, until one applies.
 */

/**
 * The 15-failure rule: an endpoint whose deliveries fail DISABLE_AFTER_FAILURES times in a row is
 * disabled, and a success starts the count again. The conditional updates below apply it, with the
 * operational events they send.
 */

/** Consecutive failed deliveries after which an endpoint is disabled. */
export const DISABLE_AFTER_FAILURES = 15;

export interface HealthRules {
  /** The consecutive failure that sends `webhook_endpoint.failing` (WEBHOOK_FAILING_AFTER, default 5). */
  failingAfter: number;
}

/** The endpoint fields the events need: the API shape is made from them. */
type EndpointState = Schema<"WebhookEndpoint">;

/** One candidate write: applies when `filter` matches, and records `events` with it. */
export interface HealthUpdate {
  filter: Filter<HealthDoc>;
  update: UpdateFilter<HealthDoc>;
  events: StoredEvent[];
  /** This update disables the endpoint. */
  disables?: boolean;
}

/** The part of an endpoint document the updates touch. */
export interface HealthDoc {
  _id: string;
  status: "enabled" | "disabled";
  consecutive_failures: number;
  disabled_at: Date | null;
  disabled_reason: DisabledReason | null;
  updated_at: Date;
  version: number;
  pending_events?: StoredEvent[];
  /** The latest deliveries counted (see the module comment). */
  counted_deliveries?: string[];
}

/** Deliveries an endpoint remembers having counted: far more than are ever counted at once. */
export const COUNTED_KEPT = 50;

/** `candidate`, applying only while `deliveryId` is uncounted, and recording it as counted. */
function once(deliveryId: string, candidate: HealthUpdate): HealthUpdate {
  const { $push, ...rest } = candidate.update as { $push?: object } & UpdateFilter<HealthDoc>;
  return {
    ...candidate,
    filter: { ...candidate.filter, counted_deliveries: { $ne: deliveryId } },
    update: {
      ...rest,
      $push: { ...$push, counted_deliveries: { $each: [deliveryId], $slice: -COUNTED_KEPT } },
    } as UpdateFilter<HealthDoc>,
  };
}

/** An operational event about `endpoint`: never delivered to it (events/model.ts `receives`). */
export function operationalEvent(
  workspaceId: string,
  endpointId: string,
  type:
    | "webhook_endpoint.failing"
    | "webhook_endpoint.disabled"
    | "webhook_endpoint.recovered"
    | "webhook_delivery.failed",
  data: object,
  now: Date,
): StoredEvent {
  return { ...newEvent(workspaceId, type, data, undefined, now), about_endpoint_id: endpointId };
}

const push = (events: StoredEvent[]) =>
  events.length === 0 ? {} : { $push: { pending_events: { $each: events } } };

/**
 * The writes for one failed delivery, tried in order until one applies: a count below the
 * warning, the count that reaches it (with `failing`), the count that reaches the limit (which
 * disables, with `disabled`), and, for an endpoint no longer enabled, the delivery's event alone.
 * `deliveryFailed` is the `webhook_delivery.failed` event, if the delivery is known to have failed.
 */
export function failureUpdates(
  workspaceId: string,
  endpoint: EndpointState,
  rules: HealthRules,
  delivery: { id: string; failedEvent: StoredEvent | undefined },
  now: Date,
): HealthUpdate[] {
  const deliveryFailed = delivery.failedEvent;
  const warnAt = rules.failingAfter;
  const limit = DISABLE_AFTER_FAILURES;
  const id = endpoint.id;
  const first = deliveryFailed ? [deliveryFailed] : [];
  const failing = operationalEvent(
    workspaceId,
    id,
    "webhook_endpoint.failing",
    { ...endpoint, consecutive_failures: warnAt, disable_after: limit },
    now,
  );
  const disabledState = {
    ...endpoint,
    status: "disabled" as const,
    disabled_at: now.toISOString(),
    disabled_reason: "consecutive_failures",
    consecutive_failures: limit,
    updated_at: now.toISOString(),
  };
  const disabled = operationalEvent(
    workspaceId,
    id,
    "webhook_endpoint.disabled",
    { ...disabledState, reason: "consecutive_failures" },
    now,
  );
  const count = { $inc: { consecutive_failures: 1 } };
  const candidates: HealthUpdate[] = [
    {
      filter: { _id: id, status: "enabled", consecutive_failures: { $lt: limit - 1, $ne: warnAt - 1 } },
      update: { ...count, ...push(first) },
      events: first,
    },
    {
      filter: { _id: id, status: "enabled", consecutive_failures: warnAt - 1 },
      update: { ...count, ...push([...first, failing]) },
      events: [...first, failing],
    },
    {
      filter: { _id: id, status: "enabled", consecutive_failures: { $gte: limit - 1 } },
      update: {
        $set: {
          status: "disabled",
          disabled_at: now,
          disabled_reason: "consecutive_failures",
          consecutive_failures: limit,
          updated_at: now,
        },
        // It writes the status a PATCH writes, so a PATCH decided before it decides again.
        $inc: { version: 1 },
        ...push([...first, disabled]),
      },
      events: [...first, disabled],
      disables: true,
    },
    // Disabled meanwhile (by its owner, or by another worker's failure): no count, but the
    // delivery still failed.
    { filter: { _id: id, status: { $ne: "enabled" as const } }, update: push(first), events: first },
  ];
  return candidates.map((candidate) => once(delivery.id, candidate));
}

/**
 * The writes for one successful delivery, tried in order: the end of a failing streak (count at
 * or past the warning, with `recovered`), then a plain reset of a shorter streak (or of an
 * endpoint no longer enabled). None applies when the count is 0 already: nothing to write.
 */
export function successUpdates(
  workspaceId: string,
  endpoint: EndpointState,
  rules: HealthRules,
  deliveryId: string,
  now: Date,
): HealthUpdate[] {
  const id = endpoint.id;
  const recovered = operationalEvent(
    workspaceId,
    id,
    "webhook_endpoint.recovered",
    { ...endpoint, consecutive_failures: 0 },
    now,
  );
  const reset = { $set: { consecutive_failures: 0 } };
  const candidates: HealthUpdate[] = [
    {
      filter: { _id: id, status: "enabled", consecutive_failures: { $gte: rules.failingAfter } },
      update: { ...reset, ...push([recovered]) },
      events: [recovered],
    },
    {
      filter: {
        _id: id,
        consecutive_failures: { $ne: 0 },
        $or: [{ consecutive_failures: { $lt: rules.failingAfter } }, { status: { $ne: "enabled" } }],
      },
      update: reset,
      events: [],
    },
    // Nothing to reset (another success did): the delivery is counted all the same, so that a
    // second count of it cannot reset failures that came after it.
    { filter: { _id: id }, update: {}, events: [] },
  ];
  return candidates.map((candidate) => once(deliveryId, candidate));
}

/** `webhook_endpoint.disabled` for a disable by the owner's PATCH: `state` is the endpoint after it. */
export function ownerDisabledEvent(workspaceId: string, state: EndpointState, now: Date): StoredEvent {
  return operationalEvent(
    workspaceId,
    state.id,
    "webhook_endpoint.disabled",
    { ...state, reason: "owner" },
    now,
  );
}
