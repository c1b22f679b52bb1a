import type { Handler } from "../platform/http/operation.js";
import { parsePage, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { type Conversations, toConversation } from "./conversations.js";
import type { Messages } from "./messages.js";
import { toMessage } from "./messages.js";

type Kit = RouteKit<{ conversations: Conversations; messages: Messages }>;

/** The conversations operations: parse → call → shape; the rules live in conversations/conversations.ts and conversations/messages.ts. */
export function conversationRoutes(kit: Kit): void {
  mountHandlers(kit, { listConversations, getConversation, listMessages, sendMessage });
}

function listConversations({ store }: Kit): Handler<"listConversations"> {
  return async ({ ctx, query }) => {
    const page = parsePage(query);
    const { status, channel, contact_id, unread } = query;
    const filters = { status, channel, contact_id, unread };
    const docs = await store.conversations.list(workspaceOf(ctx), filters, page);
    return { status: 200, body: toPage(docs, page.limit, toConversation) };
  };
}

function getConversation({ store }: Kit): Handler<"getConversation"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: toConversation(await store.conversations.get(workspaceOf(ctx), id)),
  });
}

function listMessages({ store }: Kit): Handler<"listMessages"> {
  return async ({ ctx, id, query }) => {
    const conversation = await store.conversations.get(workspaceOf(ctx), id);
    const page = parsePage(query);
    const docs = await store.messages.list(conversation, page);
    return { status: 200, body: toPage(docs, page.limit, toMessage) };
  };
}

function sendMessage({ store }: Kit): Handler<"sendMessage"> {
  return async ({ ctx, id, body }) => {
    const conversation = await store.conversations.get(workspaceOf(ctx), id);
    const { message } = await store.conversations.addMessage(conversation, {
      body: body.body,
      internal_note: body.internal_note,
      author_type: "api",
    });
    return { status: 201, body: toMessage(message) };
  };
}
