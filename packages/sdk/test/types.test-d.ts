// Compile-time checks: params, bodies and results come from the spec, so a wrong one fails tsc
// (each @ts-expect-error below must be an error, or the typecheck fails).
import { describe, expectTypeOf, it } from "vitest";
import type {
  Contact,
  ContactSearchField,
  Deskline,
  DesklineClient,
  ErrorBody,
  ErrorCode,
  Message,
  OperationErrorCode,
  PagePromise,
  SearchFilter,
  Ticket,
  TicketSearchField,
  WebhookDelivery,
  WebhookEndpointWithSecret,
  WebhookRecovery,
  WebhookRecoveryPreview,
} from "../src/index.js";

declare const deskline: Deskline;
type ContactFilter = SearchFilter<ContactSearchField>;
type TicketFilter = SearchFilter<TicketSearchField>;
declare const raw: DesklineClient;

describe("Deskline types: results, search, lists and deliveries", () => {
  it("types results from the spec", () => {
    expectTypeOf(deskline.contacts.get("con_1")).resolves.toEqualTypeOf<Contact>();
    expectTypeOf(deskline.tickets.update("tkt_1", { status: "Solved" })).resolves.toEqualTypeOf<Ticket>();
    expectTypeOf(
      deskline.webhookEndpoints.create({ url: "https://x.example" }),
    ).resolves.toEqualTypeOf<WebhookEndpointWithSecret>();
    expectTypeOf(
      deskline.conversations.messages.create("conv_1", { body: "hi", internal_note: false }),
    ).resolves.toEqualTypeOf<Message>();
    expectTypeOf(deskline.contacts.delete("con_1")).resolves.toEqualTypeOf<{
      id: string;
      object: "contact";
      deleted: true;
    }>();
  });

  it("search() takes only its resource's fields, and `values` only with in/nin", () => {
    deskline.contacts.search({
      filter_groups: [
        {
          filters: [
            { field: "lifecycle_stage", operator: "eq", value: "lead" },
            { field: "custom_fields.plan", operator: "in", values: ["pro", "team"] },
          ],
        },
      ],
    });
    // @ts-expect-error not a contact field
    const nickname: ContactFilter = { field: "nickname", operator: "eq", value: "x" };
    // @ts-expect-error `in` takes `values`
    const inOne: ContactFilter = { field: "tags", operator: "in", value: "vip" };
    // @ts-expect-error tickets have no custom fields
    const custom: TicketFilter = { field: "custom_fields.x", operator: "eq", value: 1 };
    expectTypeOf([nickname, inOne, custom]).toBeArray();
    expectTypeOf(deskline.tickets.search()).resolves.toHaveProperty("data").toEqualTypeOf<Ticket[]>();
  });

  it("list() is a page and an async iterable of items", () => {
    const list = deskline.tickets.list({ status: "New", limit: 5 });
    expectTypeOf(list).toMatchTypeOf<
      PagePromise<{ object: "list"; data: Ticket[]; has_more: boolean }, Ticket>
    >();
    expectTypeOf(list).resolves.toHaveProperty("has_more").toEqualTypeOf<boolean>();
    expectTypeOf(list).toMatchTypeOf<AsyncIterable<Ticket>>();
  });

  it("types deliveries, resend and recover (202 answers) from the spec", () => {
    expectTypeOf(deskline.events.resend("evt_1")).resolves.toEqualTypeOf<{
      object: "list";
      data: WebhookDelivery[];
      has_more: boolean;
    }>();
    expectTypeOf(
      deskline.webhookEndpoints.recover("we_1", { since: 0 }),
    ).resolves.toEqualTypeOf<WebhookRecovery>();
    // Without `since`: from the endpoint's first failure. The dry run has a method and a type of its own.
    expectTypeOf(deskline.webhookEndpoints.recover("we_1")).resolves.toEqualTypeOf<WebhookRecovery>();
    expectTypeOf(
      deskline.webhookEndpoints.previewRecovery("we_1", { since: 0 }),
    ).resolves.toEqualTypeOf<WebhookRecoveryPreview>();
    expectTypeOf(deskline.webhookEndpoints.deliveries("we_1", { status: "failed" })).toMatchTypeOf<
      AsyncIterable<WebhookDelivery>
    >();
    expectTypeOf(deskline.events.deliveries("evt_1")).toMatchTypeOf<AsyncIterable<WebhookDelivery>>();
    expectTypeOf<WebhookDelivery["status"]>().toEqualTypeOf<"pending" | "succeeded" | "failed" | "dropped">();
  });
});

describe("Deskline types: wrong bodies and params, and the raw client", () => {
  it("refuses wrong bodies and params", () => {
    // @ts-expect-error `name` is required
    deskline.contacts.create({ email: "ada@example.com" });
    // @ts-expect-error unknown field
    deskline.contacts.create({ name: "Ada", nickname: "A" });
    // @ts-expect-error `tags` is an array of strings
    deskline.contacts.update("con_1", { tags: "vip" });
    // @ts-expect-error not a ticket status
    deskline.tickets.update("tkt_1", { status: "Done" });
    // @ts-expect-error not a ticket status filter
    deskline.tickets.list({ status: "done" });
    // @ts-expect-error not a list parameter of contacts
    deskline.contacts.list({ priority: "high" });
    // @ts-expect-error `limit` is a number
    deskline.contacts.list({ limit: "10" });
    // @ts-expect-error `internal_note` is required
    deskline.conversations.messages.create("conv_1", { body: "hi" });
    // @ts-expect-error unknown event type
    deskline.webhookEndpoints.create({ url: "https://x.example", events: ["contact.exploded"] });
    // @ts-expect-error events cannot be created through the API
    deskline.events.create;
    // @ts-expect-error not a webhook endpoint status
    deskline.webhookEndpoints.update("we_1", { status: "paused" });
    // @ts-expect-error `expires_in` is a number of seconds
    deskline.webhookEndpoints.rotateSecret("we_1", { expires_in: "1h" });
    // @ts-expect-error the id is a string
    deskline.contacts.get(42);
    // @ts-expect-error a dry run is `previewRecovery`, whose answer is another type
    deskline.webhookEndpoints.recover("we_1", { dry_run: true });
    // @ts-expect-error `since` is Unix seconds or an RFC 3339 string
    deskline.webhookEndpoints.recover("we_1", { since: true });
    // @ts-expect-error not a delivery status
    deskline.webhookEndpoints.deliveries("we_1", { status: "delivered" });
    // @ts-expect-error resend takes an endpoint id, not a list
    deskline.events.resend("evt_1", { endpoint_ids: ["we_1"] });
  });

  it("types the raw client by path", async () => {
    const { data, error } = await raw.GET("/open/v1/tickets/{id}", { params: { path: { id: "tkt_1" } } });
    expectTypeOf(data).toEqualTypeOf<Ticket | undefined>();
    expectTypeOf(error?.error.code).toEqualTypeOf<ErrorCode | undefined>();
    // The error body type of `errorFromResponse` is the spec's, every field optional.
    expectTypeOf<ErrorBody["code"]>().toEqualTypeOf<ErrorCode | undefined>();
    // @ts-expect-error the path parameter is required
    await raw.GET("/open/v1/tickets/{id}", {});
    // @ts-expect-error no such path
    await raw.GET("/open/v1/nothing");
  });
});

describe("OperationErrorCode", () => {
  it("is the codes the spec's x-error-codes lists for the operation, all of them ErrorCodes", () => {
    expectTypeOf<"ticket_status_terminal">().toMatchTypeOf<OperationErrorCode<"updateTicket">>();
    expectTypeOf<"email_taken">().toMatchTypeOf<OperationErrorCode<"createContact">>();
    expectTypeOf<OperationErrorCode<"mergeContacts">>().toMatchTypeOf<ErrorCode>();
    // getContact never answers a status conflict.
    expectTypeOf<"ticket_status_terminal">().not.toMatchTypeOf<OperationErrorCode<"getContact">>();
    // @ts-expect-error: an admin operation is not the SDK's
    expectTypeOf<OperationErrorCode<"createWorkspace">>().toBeString();
  });
});
