// Checked by tsc in `pnpm typecheck` (vitest runs only *.test.ts): the lists the server works from
// are the spec's, and handlers are held to the spec's types.
import { expectTypeOf } from "vitest";
import type { CONTACT_FIELDS } from "../src/contacts/contacts.js";
import { AppError, type ErrorCode, type ErrorType } from "../src/platform/errors.js";
import type { Handler } from "../src/platform/http/operation.js";
import type { BodyOf, QueryOf, Schema } from "../src/spec/types.js";
import type { TicketStatus } from "../src/tickets/status-transitions.js";
import type { TICKET_FIELDS } from "../src/tickets/tickets.js";
import type { Scope } from "../src/workspaces/api-keys.js";

type ContactField = (typeof CONTACT_FIELDS)[number];
type TicketField = (typeof TICKET_FIELDS)[number];
/** What every resource carries besides its client-set fields. */
type Common = "id" | "object" | "created_at" | "updated_at";

// A field added to one body but not the other, or to a body but not the resource (or back), fails
// here: the server stores and shows exactly the fields these lists name.
expectTypeOf<ContactField>().toEqualTypeOf<keyof BodyOf<"createContact">>();
expectTypeOf<ContactField>().toEqualTypeOf<keyof BodyOf<"updateContact">>();
expectTypeOf<ContactField | Common | "phone_e164" | "phone_country">().toEqualTypeOf<
  keyof Schema<"Contact">
>();
expectTypeOf<TicketField>().toEqualTypeOf<keyof BodyOf<"createTicket">>();
expectTypeOf<TicketField>().toEqualTypeOf<keyof BodyOf<"updateTicket">>();
expectTypeOf<TicketField | Common | "solved_at" | "closed_at">().toEqualTypeOf<keyof Schema<"Ticket">>();

expectTypeOf<TicketStatus>().toEqualTypeOf<Schema<"TicketStatus">>();
expectTypeOf<Scope>().toEqualTypeOf<Schema<"Scope">>();

// Errors speak only the spec's vocabulary: a code the spec's `ErrorCode` does not list is refused.
expectTypeOf<ErrorCode>().toEqualTypeOf<Schema<"ErrorResponse">["error"]["code"]>();
expectTypeOf<ErrorType>().toEqualTypeOf<Schema<"ErrorResponse">["error"]["type"]>();
expectTypeOf<ErrorCode>().toEqualTypeOf<Schema<"ErrorDetail">["code"]>();
const listedCode = new AppError(409, "webhook_endpoint_disabled", "Disabled.");
// @ts-expect-error `no_such_code` is not in the spec's ErrorCode
const unlistedCode = new AppError(400, "no_such_code", "Unlisted.");

// Queries arrive coerced: numbers are numbers, a repeatable parameter is an array.
expectTypeOf<QueryOf<"listContacts">["limit"]>().toEqualTypeOf<number | undefined>();
expectTypeOf<QueryOf<"listContacts">["tag"]>().toEqualTypeOf<string[] | undefined>();
expectTypeOf<QueryOf<"listTickets">["status"]>().toEqualTypeOf<TicketStatus | undefined>();
expectTypeOf<BodyOf<"createContact">["name"]>().toEqualTypeOf<string>();

// A handler must answer a documented status with that status's body.
const deleted: Handler<"deleteContact"> = async ({ id }) => ({
  status: 200,
  body: { id, object: "contact", deleted: true },
});
// @ts-expect-error 201 is not a status deleteContact documents
const wrongStatus: Handler<"deleteContact"> = async ({ id }) => ({
  status: 201,
  body: { id, object: "contact", deleted: true },
});
// @ts-expect-error a delete answers a DeletedObject, not a list
const wrongBody: Handler<"deleteContact"> = async () => ({
  status: 200,
  body: { object: "list", data: [], has_more: false },
});
// @ts-expect-error listContacts takes no body, so its handler has none to read
const noBody: Handler<"listContacts"> = async ({ body }) => body.name;

export { deleted, listedCode, noBody, unlistedCode, wrongBody, wrongStatus };
