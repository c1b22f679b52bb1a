import type { Db } from "mongodb";
import type { EventRelay } from "../events/outbox-relay.js";
import { newestFirst, type Page } from "../platform/database/lists.js";
import { newId } from "../platform/ids.js";
import { type Owned, WorkspaceRecords } from "../records/record.js";
import type { Schema } from "../spec/types.js";

/**
 * The `messages` collection: every message of every conversation, in its own collection so a
 * long conversation never grows one document, keyed `{workspace_id, conversation_id, _id}` so a
 * page of one conversation is one index range. Messages are never edited or deleted.
 */

/** Who wrote a message (spec `Message.author_type`); the direction follows from it. */
export type AuthorType = Schema<"MessageAuthorType">;

export interface MessageDoc extends Owned {
  conversation_id: string;
  body: string;
  internal_note: boolean;
  direction: Schema<"MessageDirection">;
  author_type: AuthorType;
  created_at: Date;
  updated_at: Date;
}

/** What a new message says; the conversation it belongs to is given separately. */
export interface MessageInput {
  body: string;
  internal_note: boolean;
  author_type: AuthorType;
}

export function toMessage(doc: MessageDoc) {
  return {
    id: doc._id,
    object: "message" as const,
    conversation_id: doc.conversation_id,
    body: doc.body,
    internal_note: doc.internal_note,
    direction: doc.direction,
    author_type: doc.author_type,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** A message document, not yet stored; its id sorts after every earlier message of this process. */
export function newMessage(
  conversation: { _id: string; workspace_id: string },
  input: MessageInput,
  now = new Date(),
): MessageDoc {
  return {
    _id: newId("msg", now.getTime()),
    workspace_id: conversation.workspace_id,
    conversation_id: conversation._id,
    body: input.body,
    internal_note: input.internal_note,
    // Only customers write in; agents (and the API, which acts for them) write out, notes included.
    direction: input.author_type === "customer" ? "inbound" : "outbound",
    author_type: input.author_type,
    created_at: now,
    updated_at: now,
  };
}

export class Messages extends WorkspaceRecords<MessageDoc> {
  constructor(db: Db, relay: EventRelay) {
    super({ db, collection: "messages", noun: "message", relay });
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex(
      { workspace_id: 1, conversation_id: 1, _id: -1 },
      { name: "conversation_newest" },
    );
  }

  /**
   * Stores one message, with the `message.received` a customer message carries in
   * `pending_events` (see `Conversations.addMessage`), and relays it. A new conversation's first
   * message is the exception: there the conversation insert, which comes after, records it
   * (`Conversations.start`).
   */
  insert(doc: MessageDoc): Promise<MessageDoc> {
    return this.insertNew(doc);
  }

  /** A page of one conversation's messages, newest first, one more than asked for `has_more`. */
  list(conversation: { _id: string; workspace_id: string }, page: Page): Promise<MessageDoc[]> {
    const filter = { conversation_id: conversation._id };
    return newestFirst(this.collection, conversation.workspace_id, filter, page);
  }
}
