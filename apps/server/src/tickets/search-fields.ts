import { schemaEnums } from "@deskline/spec/values";
import { fieldCatalog, listField, textField, timeField } from "../records/search/catalog.js";
import { type FieldsOf, OPERATORS, type SearchField } from "../records/search/filter-groups.js";
import { choice, idOf } from "../records/search/values.js";
import type { Schema } from "../spec/types.js";

/**
 * The ticket fields `searchTickets` filters on (the spec's `TicketSearchField`): where each is
 * stored and how its values read. Typed by the spec's list, so a field added there and not here
 * fails to compile.
 */

const choiceField = (path: string, values: readonly string[]): SearchField => ({
  path,
  operators: OPERATORS.choice,
  read: choice(values),
});
const idField = (path: string, prefix: string): SearchField => ({
  path,
  operators: OPERATORS.choice,
  read: idOf(prefix),
});

const FIELDS: Record<Schema<"TicketSearchField">, SearchField> = {
  id: { path: "_id", operators: OPERATORS.id, read: idOf("tkt") },
  subject: textField("subject"),
  type: textField("type"),
  status: choiceField("status", schemaEnums.TicketStatus),
  priority: choiceField("priority", schemaEnums.TicketPriority),
  category: textField("category"),
  sentiment: choiceField("sentiment", schemaEnums.TicketSentiment),
  contact_id: idField("contact_id", "con"),
  conversation_id: idField("conversation_id", "conv"),
  assignee_id: textField("assignee_id"),
  language: textField("language"),
  tags: listField("tags"),
  created_at: timeField("created_at"),
  updated_at: timeField("updated_at"),
  due_at: timeField("due_at"),
  solved_at: timeField("solved_at"),
  closed_at: timeField("closed_at"),
};

export const ticketSearchFields: FieldsOf = fieldCatalog("ticket", FIELDS);
