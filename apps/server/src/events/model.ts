import { schemaEnums } from "@deskline/spec/values";
import { newId } from "../platform/ids.js";
import { currentTraceparent } from "../platform/telemetry/index.js";

/**
 * Events (docs/design.md, Events) as pure values: their types, how one is made from a change, and which
 * endpoint subscriptions it matches. The database modules store them; nothing here does I/O.
 */

/** The spec's `EventType` enum. */
export const EVENT_TYPES = schemaEnums.EventType;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * An event as it is stored: first in the `pending_events` array of the document whose change it
 * reports (written by the same update as the change), then, moved there by the relay, in `events`.
 * Both places hold the same value, so moving it twice stores it once.
 */
export interface StoredEvent {
  /** `evt_…`: the event's id, its key in `events`, and the `Service-Delivery` of its deliveries. */
  _id: string;
  workspace_id: string;
  type: EventType;
  /** When the change happened, in whole seconds: the event's `created` is this in Unix seconds. */
  created_at: Date;
  /**
   * The event body, serialized once when the change is made: deliveries send these exact bytes
   * and the events API answers them, so the two can never differ.
   */
  payload: string;
  /**
   * The W3C trace context of the write that made the event, when tracing is on: its delivery
   * attempts join that trace (platform/telemetry/index.ts). Never part of `payload`.
   */
  traceparent?: string;
  /**
   * The webhook endpoint an operational event is about (webhooks/endpoints/health.ts): it is never
   * delivered there, where it would fail for the reason it reports.
   */
  about_endpoint_id?: string;
  /**
   * A test event (`sendWebhookEndpointTestEvent`): the one endpoint it is for. It goes nowhere
   * else, by a resend or a recovery; its body says `test: true`.
   */
  test_endpoint_id?: string;
}

/**
 * Makes the event for a change. `data` is the resource as the API returns it after the change;
 * `previous` holds the old values of the fields that changed (`*.updated`, `conversation.assigned`).
 */
export function newEvent(
  workspaceId: string,
  type: EventType,
  data: object,
  previous?: Record<string, unknown>,
  now = new Date(),
): StoredEvent {
  const created = Math.floor(now.getTime() / 1000);
  const id = newId("evt", now.getTime());
  const body = {
    id,
    object: "event",
    type,
    created,
    data,
    ...(previous === undefined ? {} : { previous_attributes: previous }),
  };
  const traceparent = currentTraceparent();
  return {
    _id: id,
    workspace_id: workspaceId,
    type,
    created_at: new Date(created * 1000),
    payload: JSON.stringify(body),
    ...(traceparent === undefined ? {} : { traceparent }),
  };
}

/**
 * The event types an endpoint subscribed to `subscriptions` receives, or undefined for every type
 * (`*`). The one statement of the rule: `isSubscribed` asks it of one event, a query of the
 * events (a recovery) of all of them.
 */
export function subscribedTypes(subscriptions: readonly string[]): readonly string[] | undefined {
  return subscriptions.includes("*") ? undefined : subscriptions;
}

/** Does an endpoint subscribed to `subscriptions` (event types, or `*` for all) receive `type`? */
export function isSubscribed(subscriptions: readonly string[], type: string): boolean {
  return subscribedTypes(subscriptions)?.includes(type) ?? true;
}

/**
 * Is `type` operational, about the webhooks themselves (`webhook_endpoint.*`,
 * `webhook_delivery.*`), rather than about a resource? The spec marks the same types
 * `x-operational` (events/catalog.ts); a test holds the two together.
 */
export const isOperational = (type: string): boolean => type.startsWith("webhook_");

/**
 * Does an endpoint receive `event`? When it subscribes to its type and the event is not about
 * the endpoint itself (an operational event: docs/decisions.md, "Operational events").
 */
export function receives(
  endpoint: { _id: string; events: readonly string[] },
  event: Pick<StoredEvent, "type" | "about_endpoint_id" | "test_endpoint_id">,
): boolean {
  if (event.test_endpoint_id !== undefined) return event.test_endpoint_id === endpoint._id;
  return isSubscribed(endpoint.events, event.type) && event.about_endpoint_id !== endpoint._id;
}

/**
 * A test event of `type` for one endpoint: the catalog's example of the type (`data`, and
 * `previous_attributes` where the type has them) in a new event, its body marked `test: true`.
 */
export function newTestEvent(
  workspaceId: string,
  type: EventType,
  example: { data: object; previous_attributes?: Record<string, unknown> },
  endpointId: string,
  now = new Date(),
): StoredEvent {
  const event = newEvent(workspaceId, type, example.data, example.previous_attributes, now);
  const body = JSON.parse(event.payload) as Record<string, unknown>;
  return { ...event, payload: JSON.stringify({ ...body, test: true }), test_endpoint_id: endpointId };
}
