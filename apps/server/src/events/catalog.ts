import type { Json } from "../spec/documents.js";
import type { Schema } from "../spec/types.js";
import { EVENT_TYPES, type EventType } from "./model.js";

/**
 * The event-type catalog (`listEventTypes`), read from the spec's `webhooks` section, the one
 * place each type's body is described: its `summary` is the description, its request body's
 * schema (every `$ref` resolved) the payload schema, and `x-operational: true` marks the types
 * about the webhooks themselves. Built once at start-up; a spec whose `webhooks` and `EventType`
 * disagree stops the server there rather than serve a catalog that lies.
 */

export type EventTypeDescription = Schema<"EventTypeDescription">;

const DIALECT = "https://json-schema.org/draft/2020-12/schema";

interface WebhookEntry {
  post?: {
    summary?: string;
    "x-operational"?: boolean;
    requestBody?: {
      content?: {
        "application/json"?: {
          schema?: Json;
          examples?: { event?: { value?: { data?: object; previous_attributes?: Record<string, unknown> } } };
        };
      };
    };
  };
}

/** An event type's example in the spec: what a test event of the type carries. */
export interface EventExample {
  data: object;
  previous_attributes?: Record<string, unknown>;
}

/**
 * Each type's example body from a dereferenced spec document (`webhooks.<type>`'s request body
 * example `event`): the test events' content (sendWebhookEndpointTestEvent). Throws at start-up
 * for a type without one, as `eventCatalog` does.
 */
export function eventExamples(dereferencedSpec: Json): Map<EventType, EventExample> {
  const webhooks = (dereferencedSpec.webhooks ?? {}) as Record<string, WebhookEntry>;
  return new Map(
    EVENT_TYPES.map((type) => {
      const content = webhooks[type]?.post?.requestBody?.content?.["application/json"];
      const value = content?.examples?.event?.value;
      if (!value?.data) throw new Error(`spec: webhooks.${type} lacks an \`event\` example`);
      const example: EventExample = structuredClone({
        data: value.data,
        ...(value.previous_attributes && { previous_attributes: value.previous_attributes }),
      });
      return [type, example];
    }),
  );
}

/** The catalog from a dereferenced spec document, in the order of the `EventType` enum. */
export function eventCatalog(dereferencedSpec: Json): EventTypeDescription[] {
  const webhooks = (dereferencedSpec.webhooks ?? {}) as Record<string, WebhookEntry>;
  const extra = Object.keys(webhooks).filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (extra.length > 0) throw new Error(`spec: webhooks ${extra.join(", ")} are not in EventType`);
  return EVENT_TYPES.map((type) => {
    const post = webhooks[type]?.post;
    const schema = post?.requestBody?.content?.["application/json"]?.schema;
    if (!post?.summary || !schema) throw new Error(`spec: webhooks.${type} lacks a summary or a body schema`);
    return {
      object: "event_type" as const,
      type,
      description: post.summary,
      operational: post["x-operational"] === true,
      // A copy: the dereferenced document shares its schema objects between places.
      schema: { $schema: DIALECT, ...structuredClone(schema) },
    };
  });
}
