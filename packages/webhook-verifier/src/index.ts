// `@deskline/webhook-verifier`: node:crypto for the sync functions, WebCrypto for the async twins.
export type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
export { WebhookVerificationError, type WebhookVerificationErrorCode } from "./errors.js";
export type {
  Contact,
  ContactCreatedEvent,
  ContactUpdatedEvent,
  Conversation,
  ConversationAssignedEvent,
  DesklineEvent,
  DesklineEventType,
  EventData,
  Message,
  MessageReceivedEvent,
  Ticket,
  TicketCreatedEvent,
  TicketUpdatedEvent,
} from "./event.js";
export type { SignOptions } from "./sign-options.js";
export { constructEvent, signPayload, verifySignature } from "./verify.js";
export { constructEventAsync, signPayloadAsync, verifySignatureAsync } from "./webcrypto.js";
