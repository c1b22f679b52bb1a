import { MongoClient } from "mongodb";
import { inject } from "vitest";
import type { ConversationDoc } from "../../src/db/conversations.js";
import { newId } from "../../src/domain/ids.js";

/**
 * The conversations API is not served yet: tests that need a conversation (a ticket's
 * `conversation_id`) put one straight into the run's database.
 */
export async function insertConversation(workspaceId: string): Promise<string> {
  const id = newId("conv");
  const client = new MongoClient(inject("mongodbUri"));
  try {
    await client
      .db(inject("databaseName"))
      .collection<ConversationDoc>("conversations")
      .insertOne({ _id: id, workspace_id: workspaceId });
  } finally {
    await client.close();
  }
  return id;
}
