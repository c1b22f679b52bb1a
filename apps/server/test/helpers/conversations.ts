import { expect } from "vitest";
import { admin, api } from "./api.js";

/** A conversation body for `createConversation`; the contact is filled in by `openConversation`. */
export interface ConversationOptions {
  channel?: string;
  subject?: string | null;
  body?: string;
  /** An existing contact of the workspace; a new one is created when absent. */
  contactId?: string;
}

/** Creates a contact of the key's workspace through the public API. */
export async function newContact(key: string, name = "Conversation Contact"): Promise<string> {
  const response = await api.post("/open/v1/contacts", { key, body: { name } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.id;
}

/**
 * Opens a conversation the way a channel would, through the admin API: a contact of the
 * workspace writes in on a channel. Returns the conversation as the API answered it.
 */
export async function openConversation(
  workspaceId: string,
  key: string,
  options: ConversationOptions = {},
): Promise<Record<string, any> & { id: string }> {
  const contactId = options.contactId ?? (await newContact(key));
  const response = await admin("POST", `/admin/v1/workspaces/${workspaceId}/conversations`, {
    contact_id: contactId,
    channel: options.channel ?? "email",
    ...(options.subject !== undefined && { subject: options.subject }),
    message: { body: options.body ?? "Hello, I need help." },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}
