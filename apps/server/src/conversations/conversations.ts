import type { Db } from "mongodb";
import { newEvent } from "../events/model.js";
import type { EventRelay } from "../events/outbox-relay.js";
import { newestFirst, type Page } from "../platform/database/lists.js";
import { notFound, unknownReference } from "../platform/errors.js";
import { newId } from "../platform/ids.js";
import { MutableRecords, type RecordDoc } from "../records/record.js";
import type { QueryOf, Schema } from "../spec/types.js";
import { type MessageDoc, type MessageInput, type Messages, newMessage, toMessage } from "./messages.js";

/**
 * The `conversations` collection (docs/design.md, Conversations and admin): a contact's conversation on a
 * channel, its unread flag, assignees and open/closed state, and how each message moves them.
 *
 * Every change is one atomic single-document write (`insertOne` or a conditional update), so
 * concurrent requests cannot lose each other's changes. Events ride in the same writes (events/outbox-relay.ts): `message.received` in the inserted
 * conversation (its first message) or message (a later one), `conversation.assigned` in the
 * assignees' update.
 */

export type ConversationStatus = Schema<"ConversationStatus">;

/**
 * A mutable record like the others (records/record.ts): every write bumps `version`, so the
 * assignees' version-checked update applies only to the state its event was made from.
 */
export interface ConversationDoc extends RecordDoc {
  status: ConversationStatus;
  channel: string;
  contact_id: string;
  subject: string | null;
  unread: boolean;
  assignee_ids: string[];
  last_message_at: Date | null;
  closed_at: Date | null;
  /**
   * The newest message that is not an internal note: `unread` is what it says (a customer message:
   * unread; an agent reply: read). A message changes `unread` only when it is newer than this (ids
   * sort by time), so whatever order concurrent messages commit in, `unread` ends up decided by
   * the newest of them.
   */
  unread_source_id: string;
}

export function toConversation(doc: ConversationDoc) {
  return {
    id: doc._id,
    object: "conversation" as const,
    status: doc.status,
    channel: doc.channel,
    contact_id: doc.contact_id,
    subject: doc.subject,
    unread: doc.unread,
    assignee_ids: doc.assignee_ids,
    last_message_at: doc.last_message_at?.toISOString() ?? null,
    closed_at: doc.closed_at?.toISOString() ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** The list filters of the spec's `listConversations`, as plain values; all combine. */
export type ConversationFilters = Pick<
  QueryOf<"listConversations">,
  "status" | "channel" | "contact_id" | "unread"
>;

/** The list filters, each an equality with its own index. */
const LIST_FILTERS = ["status", "channel", "contact_id", "unread"] as const;

/** What a channel says when a contact starts a conversation. */
export type ConversationStart = Schema<"ConversationCreate">;

/** A message together with the conversation as that message left it. */
export interface Posted {
  message: MessageDoc;
  conversation: ConversationDoc;
}

export class Conversations extends MutableRecords<ConversationDoc> {
  constructor(
    db: Db,
    private readonly refs: {
      contacts: { exists(workspaceId: string, id: string): Promise<boolean> };
      messages: Messages;
    },
    relay: EventRelay,
  ) {
    super({ db, collection: "conversations", noun: "conversation", relay });
  }

  async ensureIndexes(): Promise<void> {
    // Each list filter alone is an index range in id order; combined ones narrow the range's scan.
    await this.ensureRecordIndexes(LIST_FILTERS);
  }

  /**
   * Opens a conversation with its first customer message: `open`, `unread`, nobody assigned.
   * The message is stored first and the conversation last, so a failure in between leaves only
   * an unreachable message, never a conversation without its first message. The conversation
   * insert is therefore where `message.received` for the first message is recorded.
   */
  async start(workspaceId: string, input: ConversationStart): Promise<Posted> {
    if (!(await this.refs.contacts.exists(workspaceId, input.contact_id))) {
      throw unknownReference("contact_id", "contact", input.contact_id);
    }
    const now = new Date();
    const id = newId("conv", now.getTime());
    const message = newMessage(
      { _id: id, workspace_id: workspaceId },
      { body: input.message.body, internal_note: false, author_type: "customer" },
      now,
    );
    const conversation: ConversationDoc = {
      _id: id,
      workspace_id: workspaceId,
      status: "open",
      channel: input.channel,
      contact_id: input.contact_id,
      subject: input.subject ?? null,
      unread: true,
      assignee_ids: [],
      last_message_at: now,
      closed_at: null,
      version: 0,
      created_at: now,
      updated_at: now,
      unread_source_id: message._id,
    };
    const event = newEvent(workspaceId, "message.received", toMessage(message), undefined, now);
    conversation.pending_events = [event];
    const storedMessage = await this.refs.messages.insert(message);
    return { message: storedMessage, conversation: await this.insertNew(conversation) };
  }

  /**
   * Points every conversation of these contacts at `toId` (a merge). Each document moves in one
   * atomic write; safe to repeat. No event: no event type reports a conversation's contact.
   */
  async repoint(workspaceId: string, fromIds: string[], toId: string): Promise<void> {
    await this.collection.updateMany(
      { workspace_id: workspaceId, contact_id: { $in: fromIds } },
      { $set: { contact_id: toId }, $max: { updated_at: new Date() } },
    );
  }

  /** One conversation of any workspace: the admin API stands in for channels of every workspace. */
  async getAny(id: string): Promise<ConversationDoc> {
    const doc = await this.collection.findOne({ _id: id });
    if (!doc) throw notFound("conversation", id);
    return doc;
  }

  /** A page of the workspace's conversations, newest first, one more than asked for `has_more`. */
  list(workspaceId: string, filters: ConversationFilters, page: Page): Promise<ConversationDoc[]> {
    const filter: Record<string, unknown> = {};
    for (const field of LIST_FILTERS) {
      if (filters[field] !== undefined) filter[field] = filters[field];
    }
    return newestFirst(this.collection, workspaceId, filter, page);
  }

  /**
   * Adds a message to a conversation found with `get`/`getAny` (conversations are never deleted,
   * so it still exists). The message is stored first, then the conversation moves: a customer
   * message marks it unread, an agent reply that is not a note marks it read, and every message
   * moves `last_message_at`. The status never changes (a closed conversation stays closed).
   */
  async addMessage(conversation: ConversationDoc, input: MessageInput): Promise<Posted> {
    const message = newMessage(conversation, input);
    // A customer's message is `message.received`, recorded in the message document itself.
    const received =
      message.author_type === "customer"
        ? newEvent(
            message.workspace_id,
            "message.received",
            toMessage(message),
            undefined,
            message.created_at,
          )
        : undefined;
    if (received) message.pending_events = [received];
    const stored = await this.refs.messages.insert(message);
    return { message: stored, conversation: await this.record(stored) };
  }

  /** Moves the conversation for a stored message, in one atomic update. */
  private async record(message: MessageDoc): Promise<ConversationDoc> {
    const at = message.created_at;
    // $max: a message that commits late never moves the times backwards.
    const times = { $max: { last_message_at: at, updated_at: at }, $inc: { version: 1 } };
    const options = { returnDocument: "after" } as const;
    const decides = message.internal_note
      ? null
      : await this.collection.findOneAndUpdate(
          { _id: message.conversation_id, unread_source_id: { $lt: message._id } },
          { $set: { unread: message.direction === "inbound", unread_source_id: message._id }, ...times },
          options,
        );
    // A note, or a message older than the one that decided `unread`: only the times move.
    const updated =
      decides ?? (await this.collection.findOneAndUpdate({ _id: message.conversation_id }, times, options));
    if (!updated) throw notFound("conversation", message.conversation_id);
    return updated;
  }

  /**
   * Replaces the assignees (any workspace). Only a change of the set writes (order is ignored),
   * and that write carries `conversation.assigned`, whose `data` is the whole conversation after
   * it: so the update only applies to the exact state the event was made from (every write of a
   * conversation bumps its `version`, which the update's filter names), and a concurrent change
   * makes it read and decide again (records/record.ts `updateInWorkspace`).
   */
  async setAssignees(
    id: string,
    assigneeIds: string[],
  ): Promise<{ changed: boolean; before: ConversationDoc; after: ConversationDoc }> {
    // Any workspace's: the admin API names the conversation alone; the update is then its workspace's.
    const { workspace_id: workspaceId } = await this.getAny(id);
    type Assigned = { changed: boolean; before: ConversationDoc; after: ConversationDoc };
    return this.updateInWorkspace<Assigned>(workspaceId, id, async (before) => {
      // Both lists are duplicate-free (the spec says so), so equal sizes and inclusion are equal sets.
      const same =
        before.assignee_ids.length === assigneeIds.length &&
        assigneeIds.every((assignee) => before.assignee_ids.includes(assignee));
      if (same) return { result: { changed: false, before, after: before } };
      const now = new Date(Math.max(Date.now(), before.updated_at.getTime()));
      const after = { ...before, assignee_ids: assigneeIds, updated_at: now, version: before.version + 1 };
      const previous = { assignee_ids: before.assignee_ids };
      const event = newEvent(workspaceId, "conversation.assigned", toConversation(after), previous, now);
      const set = { assignee_ids: assigneeIds, updated_at: now };
      return { set, event, result: { changed: true, before, after } };
    });
  }

  /** Closes (stamping `closed_at`); closing a closed conversation changes nothing. */
  close(id: string): Promise<ConversationDoc> {
    const now = new Date();
    return this.moveStatus(id, "open", { status: "closed", closed_at: now, updated_at: now });
  }

  /** Reopens (clearing `closed_at`); reopening an open conversation changes nothing. */
  reopen(id: string): Promise<ConversationDoc> {
    return this.moveStatus(id, "closed", { status: "open", closed_at: null, updated_at: new Date() });
  }

  /** One conditional update: it only matches in the `from` status, so a repeat is a no-op. */
  private async moveStatus(
    id: string,
    from: ConversationStatus,
    set: Partial<ConversationDoc>,
  ): Promise<ConversationDoc> {
    const moved = await this.collection.findOneAndUpdate(
      { _id: id, status: from },
      { $set: set, $inc: { version: 1 } },
      { returnDocument: "after" },
    );
    return moved ?? this.getAny(id);
  }
}
