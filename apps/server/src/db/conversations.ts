import type { Collection, Db } from "mongodb";
import { existsInWorkspace } from "./records.js";

/** What this module knows of a conversation so far; the conversations API will add the rest. */
export interface ConversationDoc {
  _id: string;
  workspace_id: string;
}

/**
 * The `conversations` collection. Only what tickets need today (a `conversation_id` must name a
 * conversation of the workspace); the conversations issue extends it with its queries and indexes.
 */
export class Conversations {
  private readonly collection: Collection<ConversationDoc>;

  constructor(db: Db) {
    this.collection = db.collection<ConversationDoc>("conversations");
  }

  exists(workspaceId: string, id: string): Promise<boolean> {
    return existsInWorkspace(this.collection, workspaceId, id);
  }
}
