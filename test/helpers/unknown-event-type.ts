// A type of event the server records but a client does not know: `conversation.assigned`, as
// seen by a client generated from the spec as it was before that type was added within v1. Used by
// the generated-client tests (openapi-generator.test.ts, generated-clients.test.ts).
import { expect } from "vitest";
import type { World } from "./world.js";

/**
 * The type a client does not know. A server holds events of a type
 * its clients do not know when the type was added to v1 after they were generated; generating a
 * client from the spec as it was before `conversation.assigned` existed (without that type in
 * `EventType`, the `Event` union, its schema, example and webhook) makes exactly that client, while
 * the server really records such events (through the admin API's assignment). No event is forged.
 */
export const UNKNOWN = "conversation.assigned";

/** The spec as a client generated before {@link UNKNOWN} was added would have read it. */
export function withoutUnknownType(spec: any) {
  const copy = structuredClone(spec);
  const schemas = copy.components.schemas;
  schemas.EventType.enum = schemas.EventType.enum.filter((type: string) => type !== UNKNOWN);
  const ref = "#/components/schemas/ConversationAssignedEvent";
  schemas.Event.oneOf = schemas.Event.oneOf.filter((branch: { $ref: string }) => branch.$ref !== ref);
  delete schemas.ConversationAssignedEvent;
  delete copy.components.examples.ConversationAssignedEvent;
  delete copy.webhooks[UNKNOWN];
  const type = schemas.UnknownEvent.properties.type;
  type.pattern = type.pattern.replace(`|${UNKNOWN.replace(".", "\\.")}`, "");
  // Nothing but prose may still name it, or the copy would not be that older spec.
  const named: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (typeof value === "string" && /ConversationAssigned|conversation\.assigned/.test(value))
      named.push(path);
    if (typeof value !== "object" || value === null) return;
    for (const [key, item] of Object.entries(value)) {
      if (key !== "description" && key !== "summary") walk(item, `${path}/${key}`);
    }
  };
  walk(copy, "#");
  expect(named).toEqual([]);
  return copy;
}

/** The types `UnknownEvent.type`'s pattern excludes (the generators' copy of `not: EventType`). */
export function excludedByPattern(spec: any): string[] {
  const pattern: string = spec.components.schemas.UnknownEvent.properties.type.pattern;
  const excluded = /^\^\(\?!\(([^)]*)\)\$\)/.exec(pattern)?.[1] ?? "";
  return excluded.split("|").map((type) => type.replace(/\\\./g, "."));
}

/**
 * Records a `message.received` and a `conversation.assigned` event in the world's workspace: the
 * two types only channels cause (the admin API stands in for them here), a customer message on a
 * conversation, then its assignment.
 */
export async function recordUnknownTypeEvents(world: World): Promise<void> {
  const customer = await world.sdk.contacts.create({ name: "Grace Hopper" });
  const conversation = await world.admin("POST", `/admin/v1/workspaces/${world.workspaceId}/conversations`, {
    contact_id: customer.id,
    channel: "email",
    message: { body: "The printer is on fire." },
  });
  await world.admin("PUT", `/admin/v1/conversations/${conversation.id}/assignees`, {
    assignee_ids: ["agent_42"],
  });
}

/**
 * What a driver of a client generated from {@link withoutUnknownType}'s spec reports after reading
 * the workspace's events (a round trip and {@link recordUnknownTypeEvents} recorded one of every
 * type first): the type of each as its model, {@link UNKNOWN} as `UnknownEvent`, and that event's
 * fields kept.
 */
export const READ_BY_OLDER_CLIENT = {
  types: {
    "contact.created": ["ContactCreatedEvent"],
    "contact.updated": ["ContactUpdatedEvent"],
    [UNKNOWN]: ["UnknownEvent"],
    "message.received": ["MessageReceivedEvent"],
    "ticket.created": ["TicketCreatedEvent"],
    "ticket.updated": ["TicketUpdatedEvent"],
  },
  unknown: { model: "UnknownEvent", type: UNKNOWN, data_object: "conversation", same_id: true },
};
