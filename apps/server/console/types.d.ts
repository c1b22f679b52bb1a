// The API's shapes the console reads, named once from the spec's generated types
// (`@deskline/spec/openapi`): the scripts' JSDoc refers to them, so a renamed field or status in
// the spec fails the console's typecheck (tsconfig.json here, run by `pnpm typecheck`).
import type { components } from "@deskline/spec/openapi";

type Schemas = components["schemas"];

export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type WebhookEndpointWithSecret = Schemas["WebhookEndpointWithSecret"];
export type WebhookEndpointStats = Schemas["WebhookEndpointStats"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookDeliveryStatus = Schemas["WebhookDeliveryStatus"];
export type WebhookRecovery = Schemas["WebhookRecovery"];
export type EventType = Schemas["EventType"];
export type EventTypeList = Schemas["EventTypeList"];
export type ConsoleSession = { workspace_id: string; expires_at: string; csrf_token: string };

/** A page of a list (`data`, `has_more`), as every list operation answers. */
export interface Page<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}
export type DeliveryAttempt = Schemas["DeliveryAttempt"];
export type Event = Schemas["Event"];
export type WebhookEndpointUpdate = Schemas["WebhookEndpointUpdate"];
export type WebhookEndpointSigning = Schemas["WebhookEndpointSigning"];
export type EventSubscription = Schemas["EventSubscription"];
export type WebhookRecoveryPreview = Schemas["WebhookRecoveryPreview"];
export type ErrorCode = Schemas["ErrorCode"];
export type WebhookDeliveryResendResult = Schemas["WebhookDeliveryResendResult"];
