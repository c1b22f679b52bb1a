// What both entry points export besides `Deskline` and `createDesklineClient` (which differ only in
// their default transport). Runtime-neutral: no Node import may appear here.
import type { components, operations } from "@deskline/spec/openapi";
import type { operationErrorCodes } from "@deskline/spec/values";

export type { components, operations, paths } from "@deskline/spec/openapi";
export type { RequestOptions } from "./attempt-fetch.js";
export type { ClientOptions, DesklineClient } from "./client.js";
export type { DesklineOptions } from "./deskline.js";
export {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  DesklineError,
  type DesklineErrorFields,
  type ErrorBody,
  errorFromResponse,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  TimeoutError,
} from "./errors.js";
export type { BodyOf, OperationOf, QueryOf, ResultOf } from "./operations.js";
export { type Page, PagePromise } from "./paginate.js";
export type {
  Contacts,
  Conversations,
  CustomFieldDefinitions,
  CustomFieldFilters,
  Events,
  Messages,
  Tickets,
  WebhookEndpoints,
} from "./resources.js";
export type {
  ContactSearch,
  ContactSearchField,
  SearchFilter,
  TicketSearch,
  TicketSearchField,
} from "./search.js";
export type { FetchLike } from "./transport.js";
export { VERSION } from "./version.js";

type Schemas = components["schemas"];
export type Contact = Schemas["Contact"];
export type ContactCreate = Schemas["ContactCreate"];
export type ContactUpdate = Schemas["ContactUpdate"];
export type Ticket = Schemas["Ticket"];
export type TicketCreate = Schemas["TicketCreate"];
export type TicketUpdate = Schemas["TicketUpdate"];
export type TicketStatus = Schemas["TicketStatus"];
export type Conversation = Schemas["Conversation"];
export type Message = Schemas["Message"];
export type MessageCreate = Schemas["MessageCreate"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type WebhookEndpointWithSecret = Schemas["WebhookEndpointWithSecret"];
export type WebhookEndpointCreate = Schemas["WebhookEndpointCreate"];
export type EventType = Schemas["EventType"];
export type WebhookEndpointUpdate = Schemas["WebhookEndpointUpdate"];
/** How an endpoint signs: `hmac_sha256` (a `whsec_` secret, `v1`) or `ed25519` (a key pair; `public_key` verifies `v1a`). */
export type WebhookEndpointSigning = Schemas["WebhookEndpointSigning"];
/** One event queued to one endpoint (`events.deliveries`, `webhookEndpoints.deliveries`, `events.resend`). */
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookDeliveryStatus = Schemas["WebhookDeliveryStatus"];
/** The body of `events.resend`: `endpoint_id`, or nothing for every subscribed endpoint. */
export type WebhookResend = Schemas["WebhookResend"];
/** The body of `webhookEndpoints.recover`: the window, `since` and `until` (Unix seconds or RFC 3339). */
export type WebhookRecoveryCreate = Schemas["WebhookRecoveryCreate"];
/** One `webhookEndpoints.recover` call and its progress (`webhookEndpoints.getRecovery`). */
export type WebhookRecovery = Schemas["WebhookRecovery"];
export type WebhookRecoveryPreview = Schemas["WebhookRecoveryPreview"];
export type WebhookRecoveryStatus = Schemas["WebhookRecoveryStatus"];
/** An event as `events.get` returns it and webhooks deliver it; switch on `type` to narrow `data`. */
export type DesklineEvent = Schemas["Event"];
/** One entry of `events.types()`: an event type, what it means, the JSON Schema of its body. */
export type EventTypeDescription = Schemas["EventTypeDescription"];
/** The stable machine-readable codes the server answers errors with (`DesklineError.code`). */
export type ErrorCode = Schemas["ErrorCode"];
/** The broad category of an error, fixed per HTTP status (`DesklineError.type`). */
export type ErrorType = Schemas["ErrorType"];
/**
 * The error codes an operation may answer, from its `x-error-codes` in the spec:
 * `OperationErrorCode<"createContact">` is `"email_taken" | "external_id_taken" | …`, so a `switch`
 * on `DesklineError.code` can cover exactly what that call can fail with.
 */
export type OperationErrorCode<Id extends keyof operations & keyof typeof operationErrorCodes> =
  (typeof operationErrorCodes)[Id][number];
