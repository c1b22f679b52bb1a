// The event envelope (seed §2.5, DESIGN §6) and its runtime check. No node imports: shared by /web.
import type { WebhookPayload } from "./core.js";
import { WebhookVerificationError } from "./errors.js";
import type { components } from "./generated/openapi.js";

// The shapes come from spec/openapi.yaml through src/generated/openapi.ts (types only: nothing of
// it reaches the JavaScript bundle, so the package keeps zero runtime dependencies).
type Schemas = components["schemas"];

/** A contact as the API returns it, the `data` of `contact.*` events. */
export type Contact = Schemas["Contact"];
/** A ticket as the API returns it, the `data` of `ticket.*` events. */
export type Ticket = Schemas["Ticket"];
/** A message, the `data` of `message.received`. */
export type Message = Schemas["Message"];
/** A conversation, the `data` of `conversation.assigned`. */
export type Conversation = Schemas["Conversation"];

/** `previous_attributes` of an `*.updated` event: the old values of the fields that changed. */
type WithPrevious<Event, Resource> = Omit<Event, "previous_attributes"> & {
  previous_attributes: Partial<Resource>;
};

export type ContactCreatedEvent = Schemas["ContactCreatedEvent"];
export type ContactUpdatedEvent = WithPrevious<Schemas["ContactUpdatedEvent"], Contact>;
export type TicketCreatedEvent = Schemas["TicketCreatedEvent"];
export type TicketUpdatedEvent = WithPrevious<Schemas["TicketUpdatedEvent"], Ticket>;
export type MessageReceivedEvent = Schemas["MessageReceivedEvent"];
export type ConversationAssignedEvent = Schemas["ConversationAssignedEvent"];

/** A verified Deskline event; switch on `type` to narrow `data`. */
export type DesklineEvent =
  | ContactCreatedEvent
  | ContactUpdatedEvent
  | TicketCreatedEvent
  | TicketUpdatedEvent
  | MessageReceivedEvent
  | ConversationAssignedEvent;

/** Every event type of seed §6.1. */
export type DesklineEventType = DesklineEvent["type"];

/** The `data` of an event of type `T`. */
export type EventData<T extends DesklineEventType> = Extract<DesklineEvent, { type: T }>["data"];

/** The `data.object` each event type carries. */
export const EVENT_DATA_OBJECT: Readonly<Record<DesklineEventType, string>> = {
  "contact.created": "contact",
  "contact.updated": "contact",
  "ticket.created": "ticket",
  "ticket.updated": "ticket",
  "message.received": "message",
  "conversation.assigned": "conversation",
};

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
  if (typeof type !== "string" || !Object.hasOwn(EVENT_DATA_OBJECT, type)) {
    throw invalid("The event type is not one this version of the verifier knows");
  }
  if (!Number.isSafeInteger(created) || (created as number) < 0) {
    throw invalid("The event's created is not Unix seconds");
  }
  if (!isPlainObject(data) || typeof data.id !== "string") throw invalid("The event's data has no id");
  if (data.object !== EVENT_DATA_OBJECT[type as DesklineEventType]) {
    throw invalid(`The data of a ${type} event is not a ${EVENT_DATA_OBJECT[type as DesklineEventType]}`);
  }
  if (previous_attributes !== undefined && !isPlainObject(previous_attributes)) {
    throw invalid("The event's previous_attributes is not an object");
  }
  return value as unknown as DesklineEvent;
}
