// Type tests (compiled by `pnpm typecheck`): what a receiver's TypeScript sees of an event.
// A wrong type here fails the test run and `pnpm typecheck`, never only at runtime.
import Koa from "koa";
import { describe, expectTypeOf, it } from "vitest";
import {
  type Contact,
  type Conversation,
  constructEvent,
  type DesklineEvent,
  type DesklineEventType,
  type ErasedContact,
  type EventData,
  type KnownDesklineEvent,
  type Ticket,
  type UnknownDesklineEvent,
} from "../src/index.js";
import { withWebhookVerification } from "../src/middleware/fetch.js";
import { koaWebhookMiddleware } from "../src/middleware/koa.js";
import { nodeWebhookMiddleware } from "../src/middleware/node.js";

declare const event: DesklineEvent;

describe("DesklineEvent", () => {
  it("narrows data and previous_attributes by type", () => {
    if (event.type === "contact.updated") {
      // A contact erased since is resent as its marker: `erased` tells the two apart.
      expectTypeOf(event.data).toEqualTypeOf<Contact | ErasedContact>();
      if (!("erased" in event.data)) expectTypeOf(event.data.email).toEqualTypeOf<string | null>();
      expectTypeOf(event.previous_attributes.lifecycle_stage).toEqualTypeOf<
        Contact["lifecycle_stage"] | undefined
      >();
      expectTypeOf(event.previous_attributes.tags).toEqualTypeOf<string[] | undefined>();
    }
    if (event.type === "ticket.updated") {
      expectTypeOf(event.previous_attributes.status).toEqualTypeOf<Ticket["status"] | undefined>();
      expectTypeOf(event.previous_attributes).not.toHaveProperty("created_at");
    }
    if (event.type === "contact.erased") {
      expectTypeOf(event.data).toEqualTypeOf<ErasedContact>();
      expectTypeOf(event.data.erased_at).toEqualTypeOf<string>();
      expectTypeOf(event).not.toHaveProperty("previous_attributes");
    }
    if (event.type === "conversation.assigned") {
      expectTypeOf(event.data).toEqualTypeOf<Conversation>();
      expectTypeOf(event.previous_attributes.assignee_ids).toEqualTypeOf<string[]>();
    }
    if (event.type === "ticket.created") {
      expectTypeOf(event.data.object).toEqualTypeOf<"ticket">();
      expectTypeOf(event.data.status).toEqualTypeOf<
        "New" | "On you" | "On customer" | "On hold" | "Solved" | "Closed" | "Cancelled"
      >();
      expectTypeOf(event).not.toHaveProperty("previous_attributes");
    }
    expectTypeOf<EventData<"message.received">["direction"]>().toEqualTypeOf<"inbound" | "outbound">();
  });

  it("types what no case handled as an unknown event, a string type and a generic data", () => {
    switch (event.type) {
      case "contact.created":
      case "contact.updated":
      case "contact.erased":
      case "ticket.created":
      case "ticket.updated":
      case "message.received":
      case "conversation.assigned":
      case "webhook_endpoint.failing":
      case "webhook_endpoint.disabled":
      case "webhook_endpoint.recovered":
      case "webhook_delivery.failed":
        expectTypeOf(event).toEqualTypeOf<KnownDesklineEvent>();
        break;
      default:
        expectTypeOf(event).toEqualTypeOf<UnknownDesklineEvent>();
        expectTypeOf(event.type).toExtend<string>();
        expectTypeOf(event.data.id).toEqualTypeOf<string>();
        expectTypeOf(event.data.object).toEqualTypeOf<string>();
        expectTypeOf(event.data.amount).toEqualTypeOf<unknown>();
    }
  });

  it("lists only the known types as DesklineEventType", () => {
    expectTypeOf<DesklineEventType>().toEqualTypeOf<
      | "contact.created"
      | "contact.updated"
      | "contact.erased"
      | "ticket.created"
      | "ticket.updated"
      | "message.received"
      | "conversation.assigned"
      | "webhook_endpoint.failing"
      | "webhook_endpoint.disabled"
      | "webhook_endpoint.recovered"
      | "webhook_delivery.failed"
    >();
  });
});

describe("entry points", () => {
  it("constructEvent and every middleware hand over a DesklineEvent", () => {
    expectTypeOf(constructEvent).returns.toEqualTypeOf<DesklineEvent>();
    nodeWebhookMiddleware("whsec_x", { handler: (e) => expectTypeOf(e).toEqualTypeOf<DesklineEvent>() });
    withWebhookVerification("whsec_x", (e) => {
      expectTypeOf(e).toEqualTypeOf<DesklineEvent>();
      return new Response(null);
    });
  });

  it("accepts a real Koa app and ctx, mounted directly or called from another middleware", () => {
    const app = new Koa();
    app.use(koaWebhookMiddleware("whsec_x"));
    const verify = koaWebhookMiddleware("whsec_x");
    app.use(async (ctx, next) => {
      await verify(ctx, next);
    });
    koaWebhookMiddleware("whsec_x", {
      handler: (e, ctx) => {
        expectTypeOf(e).toEqualTypeOf<DesklineEvent>();
        ctx.body = { id: e.id };
      },
    });
  });
});
