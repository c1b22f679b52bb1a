// The event envelope (seed §2.5, DESIGN §6) and its runtime check. No node imports: shared by /web.
import type { WebhookPayload } from "./core.js";
import { WebhookVerificationError } from "./errors.js";

/**
 * The resource carried in `data`. Until the resource types are generated from the OpenAPI spec,
 * only `id` and `object` are typed; every other field is `unknown`.
 */
export interface EventData<Kind extends string> {
  id: string;
  object: Kind;
  [key: string]: unknown;
}

interface EventBase<Type extends string, Kind extends string> {
  /** `evt_…`, also sent as the `Service-Delivery` header; use it to deduplicate retries. */
  id: string;
  object: "event";
  type: Type;
  /** Unix seconds. */
  created: number;
  data: EventData<Kind>;
  /** On `*.updated` events: the old values of the fields that changed. */
  previous_attributes?: Record<string, unknown>;
}

export type ContactCreatedEvent = EventBase<"contact.created", "contact">;
export type ContactUpdatedEvent = EventBase<"contact.updated", "contact">;
export type TicketCreatedEvent = EventBase<"ticket.created", "ticket">;
export type TicketUpdatedEvent = EventBase<"ticket.updated", "ticket">;
export type MessageReceivedEvent = EventBase<"message.received", "message">;
export type ConversationAssignedEvent = EventBase<"conversation.assigned", "conversation">;

/** A verified Deskline event; switch on `type` to narrow `data.object`. */
export type DesklineEvent =
  | ContactCreatedEvent
  | ContactUpdatedEvent
  | TicketCreatedEvent
  | TicketUpdatedEvent
  | MessageReceivedEvent
  | ConversationAssignedEvent;

/** Every event type of seed §6.1. */
export type DesklineEventType = DesklineEvent["type"];

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
