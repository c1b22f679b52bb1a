import { schemaDefaults, schemaProperties } from "@deskline/spec/values";
import type { Db } from "mongodb";
import { newEvent, type StoredEvent } from "../events/model.js";
import type { EventRelay } from "../events/outbox-relay.js";
import { DomainError, unknownReference } from "../platform/errors.js";
import { newId } from "../platform/ids.js";
import {
  diffPatch,
  type FieldRules,
  hasChanges,
  normalizeInput,
  publicValues,
  toResource,
} from "../records/fields.js";
import { PulledRecords } from "../records/pulled-records.js";
import type { RecordDoc } from "../records/record.js";
import type { Tombstones } from "../records/tombstones.js";
import type { QueryOf, Schema } from "../spec/types.js";
import { initialState, moveTo, type StatusState, type TicketStatus } from "./status-transitions.js";

/** The ticket fields a client sets (the spec's `TicketCreate`), in response order. */
export const TICKET_FIELDS = schemaProperties.TicketCreate;

type TicketField = (typeof TICKET_FIELDS)[number];
export type TicketInput = Partial<Record<TicketField, unknown>>;

export interface TicketDoc extends Record<TicketField, unknown>, RecordDoc, StatusState {
  subject: string;
  status: TicketStatus;
  contact_id: string | null;
  conversation_id: string | null;
  tags: string[];
}

const RULES: FieldRules<TicketField> = {
  fields: TICKET_FIELDS,
  // What an unset `tags` reads as: the spec's `TicketCreate` default.
  empty: { tags: schemaDefaults.TicketCreate.tags },
  deduped: new Set(["tags"]),
  dates: new Set(["due_at"]),
  // Stamped by the status machine only; the spec's create and update bodies do not take them.
  serverSet: ["solved_at", "closed_at"],
};

/** The API shape; toResource lists exactly the spec's fields, and the tests check every response against it. */
export const toTicket = (doc: TicketDoc) => toResource(RULES, "ticket", doc) as Schema<"Ticket">;

/** The filters of `listTickets`, as the spec types its query. */
export type TicketFilters = QueryOf<"listTickets">;

/** A PATCH's answer: the ticket after it, the old values of what changed, its event if any. */
type Patched = { doc: TicketDoc; previous: Record<string, unknown>; event?: StoredEvent };

/** A collection a ticket may point into; only "is it in this workspace?" matters here. */
export interface Referenced {
  exists(workspaceId: string, id: string): Promise<boolean>;
}

export class Tickets extends PulledRecords<TicketDoc, TicketFilters> {
  /** The fields that point at other records: the field, what it names, where that lives. */
  private readonly references: [field: TicketField, noun: string, target: Referenced][];

  constructor(
    db: Db,
    refs: { contacts: Referenced; conversations: Referenced },
    relay: EventRelay,
    tombstones: Tombstones,
  ) {
    super({ db, collection: "tickets", noun: "ticket", relay, tombstones });
    this.references = [
      ["contact_id", "contact", refs.contacts],
      ["conversation_id", "conversation", refs.conversations],
    ];
  }

  async ensureIndexes(): Promise<void> {
    await this.ensureRecordIndexes(["status", "priority", "category", "contact_id", "tags"]);
  }

  async create(workspaceId: string, input: TicketInput): Promise<TicketDoc> {
    const now = new Date();
    const fields = normalizeInput(RULES, input);
    await this.assertReferences(workspaceId, fields);
    const doc = {
      _id: newId("tkt"),
      workspace_id: workspaceId,
      version: 0,
      ...fields,
      ...initialState(input.status as TicketStatus | null | undefined, now),
      created_at: now,
      updated_at: now,
    } as TicketDoc;
    // The event is part of the inserted document: no ticket without its ticket.created.
    const event = newEvent(workspaceId, "ticket.created", toTicket(doc), undefined, now);
    doc.pending_events = [event];
    return this.insertNew(doc);
  }

  /**
   * Applies a PATCH: only the fields sent change, null clears, `tags` is replaced; a status change
   * goes through the status machine, which may stamp `solved_at`/`closed_at` or refuse with 409.
   * Returns the ticket and the old values of what changed (empty: nothing changed or was written).
   */
  async update(workspaceId: string, id: string, patch: TicketInput): Promise<Patched> {
    // A conditional update (records/record.ts): a status move is written only if the ticket is still
    // in the state it was decided on, so two racing moves cannot both pass from the same status.
    return this.updateInWorkspace<Patched>(workspaceId, id, async (current) => {
      const now = new Date();
      const diff = diffPatch(RULES, current, patch);
      const changes: Record<string, unknown> = diff.changes;
      const previous: Record<string, unknown> = diff.previous;
      if (!hasChanges(diff)) return { result: { doc: current, previous } };

      if (changes.status !== undefined) {
        const { status, solved_at, closed_at } = current;
        const moved = moveTo({ status, solved_at, closed_at }, changes.status as TicketStatus, now);
        for (const stamp of ["solved_at", "closed_at"] as const) {
          if (moved[stamp] === current[stamp]) continue;
          changes[stamp] = moved[stamp];
          previous[stamp] = current[stamp];
        }
      }
      // Only ids that change are checked: a ticket keeps the id of a contact deleted since, and
      // echoing it back in a PATCH of other fields must not fail.
      await this.assertReferences(workspaceId, changes);
      const set = { ...changes, updated_at: now };
      const doc = { ...current, ...set, version: current.version + 1 } as TicketDoc;
      const event = newEvent(workspaceId, "ticket.updated", toTicket(doc), publicValues(previous), now);
      return { set, event, result: { doc, previous, event } };
    });
  }

  /**
   * Points every ticket of these contacts at `toId` (a merge), each by a PATCH of `contact_id`,
   * so each emits its `ticket.updated`. Safe to repeat: a ticket already moved matches no more.
   */
  async repoint(workspaceId: string, fromIds: string[], toId: string): Promise<void> {
    const query = { workspace_id: workspaceId, contact_id: { $in: fromIds } };
    for await (const { _id } of this.collection.find(query, { projection: { _id: 1 } })) {
      try {
        await this.update(workspaceId, _id, { contact_id: toId });
      } catch (error) {
        // Deleted meanwhile: nothing left to move.
        if (!(error instanceof DomainError && error.code === "resource_missing")) throw error;
      }
    }
  }

  protected filterOf(filters: TicketFilters): Record<string, unknown> {
    return filterOf(filters);
  }

  /**
   * `contact_id` and `conversation_id` must name records of the workspace. A foreign id gets the
   * same answer as an unknown one, so ids of other workspaces cannot be probed.
   */
  private async assertReferences(workspaceId: string, values: Record<string, unknown>): Promise<void> {
    for (const [param, noun, target] of this.references) {
      const id = values[param];
      if (typeof id !== "string" || (await target.exists(workspaceId, id))) continue;
      throw unknownReference(param, noun, id);
    }
  }
}

/** The list filters as a query. */
function filterOf(filters: TicketFilters): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (filters.status !== undefined) filter.status = filters.status;
  if (filters.priority !== undefined) filter.priority = filters.priority;
  if (filters.category !== undefined) filter.category = filters.category;
  if (filters.contact_id !== undefined) filter.contact_id = filters.contact_id;
  // Repeated `tag`: all must match.
  if (filters.tag?.length) filter.tags = { $all: filters.tag };
  return filter;
}
