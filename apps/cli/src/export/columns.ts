// The columns of each exportable resource: the fields of its create body (the columns
// `contacts import` reads, mapped by fields.ts in both directions) and the fields the API sets,
// which an export writes and an import skips, so an exported file imports as it is.
import { catalogOf, type FieldCatalog, withApiFields } from "../fields.js";
import { contactCreateSchema, ticketCreateSchema } from "../generated/schemas.js";

export const CONTACT_API_FIELDS = { first: ["id"], last: ["created_at", "updated_at"] } as const;
export const TICKET_API_FIELDS = {
  first: ["id"],
  last: ["solved_at", "closed_at", "created_at", "updated_at"],
} as const;

export const contactColumns = (): FieldCatalog =>
  withApiFields(catalogOf(contactCreateSchema), CONTACT_API_FIELDS);

export const ticketColumns = (): FieldCatalog =>
  withApiFields(catalogOf(ticketCreateSchema), TICKET_API_FIELDS);

/** Names an import skips: what the API sets (and `object`, in case a raw API object is imported). */
export const CONTACT_SKIPPED_ON_IMPORT: readonly string[] = [
  ...CONTACT_API_FIELDS.first,
  "object",
  ...CONTACT_API_FIELDS.last,
];
