import { parsePage, toPage } from "../platform/http/paging.js";
import { type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { type Conversations, toConversation } from "./conversations.js";
import type { Messages } from "./messages.js";
import { toMessage } from "./messages.js";

/** The conversations operations: parse → call → shape; the rules live in conversations/conversations.ts and conversations/messages.ts. */
export function conversationRoutes({
  op,
  store,
}: RouteKit<{ conversations: Conversations; messages: Messages }>): void {
  op("listConversations", async ({ ctx, query }) => {
    const page = parsePage(query);
    const { status, channel, contact_id, unread } = query;
    const filters = { status, channel, contact_id, unread };
    const docs = await store.conversations.list(workspaceOf(ctx), filters, page);
    return { status: 200, body: toPage(docs, page.limit, toConversation) };
  });

  op("getConversation", async ({ ctx, id }) => ({
    status: 200,
    body: toConversation(await store.conversations.get(workspaceOf(ctx), id)),
  }));

  op("listMessages", async ({ ctx, id, query }) => {
    const conversation = await store.conversations.get(workspaceOf(ctx), id);
    const page = parsePage(query);
    const docs = await store.messages.list(conversation, page);
    return { status: 200, body: toPage(docs, page.limit, toMessage) };
  });

  op("sendMessage", async ({ ctx, id, body }) => {
    const conversation = await store.conversations.get(workspaceOf(ctx), id);
    const { message } = await store.conversations.addMessage(conversation, {
      body: body.body,
      internal_note: body.internal_note,
      author_type: "api",
    });
    return { status: 201, body: toMessage(message) };
  });
}
