import type { Handler } from "../platform/http/operation.js";
import { mountHandlers, type RouteKit } from "../platform/http/route-kit.js";
import { assertWorkspace } from "../workspaces/admin-routes.js";
import type { Workspaces } from "../workspaces/workspaces.js";
import { type Conversations, toConversation } from "./conversations.js";
import type { Messages } from "./messages.js";
import { toMessage } from "./messages.js";

type Kit = RouteKit<{ workspaces: Workspaces; conversations: Conversations; messages: Messages }>;

/**
 * docs/design.md, Conversations and admin: the admin API stands in for the channels: it starts conversations, adds customer
 * messages, sets assignees and closes or reopens. Conversation ids of any workspace are accepted.
 */
export function adminConversationRoutes(kit: Kit): void {
  mountHandlers(kit, {
    createConversation,
    addCustomerMessage,
    setConversationAssignees,
    closeConversation,
    reopenConversation,
  });
}

function createConversation({ store }: Kit): Handler<"createConversation"> {
  return async ({ id, body }) => {
    await assertWorkspace(store.workspaces, id);
    const { conversation } = await store.conversations.start(id, body);
    return { status: 201, body: toConversation(conversation) };
  };
}

function addCustomerMessage({ store }: Kit): Handler<"addCustomerMessage"> {
  return async ({ id, body }) => {
    const conversation = await store.conversations.getAny(id);
    const { message } = await store.conversations.addMessage(conversation, {
      body: body.body,
      internal_note: false,
      author_type: "customer",
    });
    return { status: 201, body: toMessage(message) };
  };
}

function setConversationAssignees({ store }: Kit): Handler<"setConversationAssignees"> {
  return async ({ id, body }) => {
    const { after } = await store.conversations.setAssignees(id, body.assignee_ids);
    return { status: 200, body: toConversation(after) };
  };
}

function closeConversation({ store }: Kit): Handler<"closeConversation"> {
  return async ({ id }) => ({ status: 200, body: toConversation(await store.conversations.close(id)) });
}

function reopenConversation({ store }: Kit): Handler<"reopenConversation"> {
  return async ({ id }) => ({ status: 200, body: toConversation(await store.conversations.reopen(id)) });
}
