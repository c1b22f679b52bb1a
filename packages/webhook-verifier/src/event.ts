// The event envelope (docs/design.md, Events) and its runtime check. No node imports: shared by /web.

import type { components } from "@deskline/spec/openapi";
import type { WebhookPayload } from "./core.js";
import { WebhookVerificationError } from "./errors.js";

// The shapes come from spec/openapi.yaml through @deskline/spec (types only: nothing of it
// reaches the JavaScript bundle, so the package keeps zero runtime dependencies, and tsup inlines
// them into the published declarations).
type Schemas = components["schemas"];

/** A contact as the API returns it, the `data` of `contact.created` and `contact.updated`. */
export type Contact = Schemas["Contact"];
/**
 * What is left of an erased contact (its id and when it was erased): the `data` of
 * `contact.erased`, and of a `contact.*` event about it resent or recovered after the erasure.
 */
export type ErasedContact = Schemas["ErasedContact"];
/** A ticket as the API returns it, the `data` of `ticket.*` events. */
export type Ticket = Schemas["Ticket"];
/** A message, the `data` of `message.received`. */
export type Message = Schemas["Message"];
/** A conversation, the `data` of `conversation.assigned`. */
export type Conversation = Schemas["Conversation"];

export type ContactCreatedEvent = Schemas["ContactCreatedEvent"];
export type ContactUpdatedEvent = Schemas["ContactUpdatedEvent"];
/** A contact's personal data was erased: erase your copy (`data` is the {@link ErasedContact}). */
export type ContactErasedEvent = Schemas["ContactErasedEvent"];
export type TicketCreatedEvent = Schemas["TicketCreatedEvent"];
export type TicketUpdatedEvent = Schemas["TicketUpdatedEvent"];
export type MessageReceivedEvent = Schemas["MessageReceivedEvent"];
export type ConversationAssignedEvent = Schemas["ConversationAssignedEvent"];
/** Operational events, about the webhooks themselves: an endpoint failing, disabled or recovered. */
export type WebhookEndpointFailingEvent = Schemas["WebhookEndpointFailingEvent"];
export type WebhookEndpointDisabledEvent = Schemas["WebhookEndpointDisabledEvent"];
export type WebhookEndpointRecoveredEvent = Schemas["WebhookEndpointRecoveredEvent"];
/** A delivery that used its last attempt: `data` is the delivery (`endpoint_id`, `event_id`…). */
export type WebhookDeliveryFailedEvent = Schemas["WebhookDeliveryFailedEvent"];

/** An event of a type this version of the package knows: one of the spec's `EventType`. */
export type KnownDesklineEvent = Schemas["Event"];

/** Every event type this version knows (the spec's `EventType`). */
export type DesklineEventType = KnownDesklineEvent["type"];

declare const unknownEventType: unique symbol;

/**
 * The `type` of an event this version does not know yet (the API adds types within v1): a
 * `resource.action` string. Branded so that it overlaps none of the known literals, which keeps
 * `switch (event.type)` narrowing the known events; it is still a string to read and log.
 */
export type UnknownEventType = `${string}.${string}` & { readonly [unknownEventType]: true };

/** An authentic event of a type this version does not know: only the envelope is typed. */
export interface UnknownDesklineEvent {
  id: string;
  object: "event";
  type: UnknownEventType;
  /** Unix time in seconds. */
  created: number;
  data: { id: string; object: string; [field: string]: unknown };
  previous_attributes?: { [field: string]: unknown };
}

/**
 * A verified Deskline event. Switch on `type`: each known type narrows `data` (and
 * `previous_attributes`); whatever is left (the `default` branch) is an {@link UnknownDesklineEvent},
 * a type added to the API after this version: acknowledge it rather than fail.
 */
export type DesklineEvent = KnownDesklineEvent | UnknownDesklineEvent;

/** The `data` of an event of type `T`. */
export type EventData<T extends DesklineEventType> = Extract<KnownDesklineEvent, { type: T }>["data"];

/** The `data.object` each event type carries. */
export const EVENT_DATA_OBJECT: Readonly<Record<DesklineEventType, string>> = {
  "contact.created": "contact",
  "contact.updated": "contact",
  "contact.erased": "contact",
  "ticket.created": "ticket",
  "ticket.updated": "ticket",
  "message.received": "message",
  "conversation.assigned": "conversation",
  "webhook_endpoint.failing": "webhook_endpoint",
  "webhook_endpoint.disabled": "webhook_endpoint",
  "webhook_endpoint.recovered": "webhook_endpoint",
  "webhook_delivery.failed": "webhook_delivery",
};

/**
 * A well-formed event type: lowercase `resource.action` names (`contact.created`,
 * `conversation.assigned`), as the API adds them within v1.
 */
const EVENT_TYPE = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$/;

const decoder = new TextDecoder("utf-8", { fatal: true });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(message: string, cause?: unknown): WebhookVerificationError {
  return new WebhookVerificationError(
    "invalid_payload",
    message,
    cause === undefined ? undefined : { cause },
  );
}

/** Parses an already verified body; only called after the signature passed. */
export function parseEvent(payload: WebhookPayload): DesklineEvent {
  let value: unknown;
  try {
    value = JSON.parse(typeof payload === "string" ? payload : decoder.decode(payload));
  } catch (error) {
    throw invalid("The webhook body is not valid UTF-8 JSON", error);
  }
  if (!isPlainObject(value)) throw invalid("The webhook body is not a JSON object");
  const { id, object, type, created, data, previous_attributes } = value;
  if (typeof id !== "string" || !id.startsWith("evt_")) throw invalid("The event has no evt_ id");
  if (object !== "event") throw invalid('The event\'s object is not "event"');
  if (typeof type !== "string" || !EVENT_TYPE.test(type)) {
    throw invalid("The event type is not a resource.action name");
  }
  if (!Number.isSafeInteger(created) || (created as number) < 0) {
    throw invalid("The event's created is not Unix seconds");
  }
  if (!isPlainObject(data) || typeof data.id !== "string") throw invalid("The event's data has no id");
  // A known type carries its own resource; a type added after this version, some resource.
  const known = Object.hasOwn(EVENT_DATA_OBJECT, type)
    ? EVENT_DATA_OBJECT[type as DesklineEventType]
    : undefined;
  if (known !== undefined && data.object !== known)
    throw invalid(`The data of a ${type} event is not a ${known}`);
  if (typeof data.object !== "string" || data.object === "")
    throw invalid("The event's data names no object");
  if (previous_attributes !== undefined && !isPlainObject(previous_attributes)) {
    throw invalid("The event's previous_attributes is not an object");
  }
  return value as unknown as DesklineEvent;
}
