// `@deskline/webhook-verifier/web`: the WebCrypto API alone, with no node import anywhere, for
// Deno, Bun, Cloudflare Workers and other edge runtimes.
export type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
export { WebhookVerificationError, type WebhookVerificationErrorCode } from "./errors.js";
export type {
  Contact,
  ContactCreatedEvent,
  ContactErasedEvent,
  ContactUpdatedEvent,
  Conversation,
  ConversationAssignedEvent,
  DesklineEvent,
  DesklineEventType,
  ErasedContact,
  EventData,
  KnownDesklineEvent,
  Message,
  MessageReceivedEvent,
  Ticket,
  TicketCreatedEvent,
  TicketUpdatedEvent,
  UnknownDesklineEvent,
  UnknownEventType,
  WebhookDeliveryFailedEvent,
  WebhookEndpointDisabledEvent,
  WebhookEndpointFailingEvent,
  WebhookEndpointRecoveredEvent,
} from "./event.js";
export type { SignOptions } from "./sign-options.js";
export type { StandardWebhookHeaderSource, StandardWebhookHeaders } from "./standard-signature.js";
export {
  constructEventAsync,
  signPayloadAsync,
  verifySignatureAsync,
  verifyStandardWebhookAsync,
} from "./webcrypto.js";
