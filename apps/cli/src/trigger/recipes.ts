// What it takes to cause each event type (Stripe's `stripe trigger` fixtures): the fewest real
// API calls whose last one emits the event. Contacts and tickets go through the public API;
// customer messages and assignments come from channels, which the admin API stands in for.
import type { Deskline, EventType } from "@deskline/sdk";
import { type AdminClient, dataOf } from "../admin.js";

/** What a recipe needs; `admin()` asks for the admin API only when a recipe calls it. */
export interface TriggerContext {
  deskline: Deskline;
  admin: () => Promise<{ client: AdminClient; workspaceId: string }>;
}

/** The ids of what a recipe created or changed, by kind (`contact`, `ticket`, `conversation`). */
export type Created = Record<string, string>;

export interface Recipe {
  type: EventType;
  /** What it does, for `--list`. */
  summary: string;
  needsAdmin: boolean;
  run: (context: TriggerContext) => Promise<Created>;
}

const LABEL = "deskline trigger";

const newContact = (deskline: Deskline) =>
  deskline.contacts.create({ name: "Ada Trigger", source: LABEL, tags: ["trigger"] });

const newTicket = (deskline: Deskline) =>
  deskline.tickets.create({
    subject: "Printer on fire (deskline trigger)",
    priority: "normal",
    tags: ["trigger"],
  });

/**
 * An endpoint no delivery can reach (a `.invalid` host never resolves), subscribed to
 * `contact.created`, and `contacts` contacts: each delivery fails once its retries ran out.
 */
async function unreachableEndpoint(deskline: Deskline, contacts: number): Promise<Created> {
  const endpoint = await deskline.webhookEndpoints.create({
    url: "https://deskline-trigger.invalid/unreachable",
    description: `${LABEL}: fails on purpose; delete it once the event arrived`,
    events: ["contact.created"],
  });
  for (let i = 0; i < contacts; i++) await newContact(deskline);
  return { endpoint: endpoint.id };
}

/** A contact, and a conversation with its first customer message (`message.received`). */
async function newConversation(context: TriggerContext): Promise<Created> {
  const contact = await newContact(context.deskline);
  const { client, workspaceId } = await context.admin();
  const conversation = dataOf(
    await client.POST("/admin/v1/workspaces/{id}/conversations", {
      params: { path: { id: workspaceId } },
      body: {
        contact_id: contact.id,
        channel: "email",
        subject: "Wrong VAT number (deskline trigger)",
        message: { body: "Hello, the VAT number on my invoice is wrong." },
      },
    }),
  );
  return { contact: contact.id, conversation: conversation.id };
}

export const RECIPES: readonly Recipe[] = [
  {
    type: "contact.created",
    summary: "creates a contact",
    needsAdmin: false,
    run: async ({ deskline }) => ({ contact: (await newContact(deskline)).id }),
  },
  {
    type: "contact.updated",
    summary: "creates a contact, then moves its lifecycle_stage to customer",
    needsAdmin: false,
    run: async ({ deskline }) => {
      const contact = await newContact(deskline);
      await deskline.contacts.update(contact.id, { lifecycle_stage: "customer" });
      return { contact: contact.id };
    },
  },
  {
    type: "ticket.created",
    summary: "creates a ticket",
    needsAdmin: false,
    run: async ({ deskline }) => ({ ticket: (await newTicket(deskline)).id }),
  },
  {
    type: "ticket.updated",
    summary: 'creates a ticket, then moves its status to "On you"',
    needsAdmin: false,
    run: async ({ deskline }) => {
      const ticket = await newTicket(deskline);
      await deskline.tickets.update(ticket.id, { status: "On you" });
      return { ticket: ticket.id };
    },
  },
  {
    type: "message.received",
    summary: "creates a contact and a conversation with a customer message (admin API)",
    needsAdmin: true,
    run: newConversation,
  },
  {
    type: "conversation.assigned",
    summary: "creates a contact and a conversation, then assigns it (admin API)",
    needsAdmin: true,
    run: async (context) => {
      const created = await newConversation(context);
      const { client } = await context.admin();
      dataOf(
        await client.PUT("/admin/v1/conversations/{id}/assignees", {
          params: { path: { id: created.conversation as string } },
          body: { assignee_ids: ["agent_trigger"] },
        }),
      );
      return created;
    },
  },
  {
    type: "webhook_endpoint.disabled",
    summary: "creates an endpoint (to a .invalid host), disables it (reason owner), then deletes it",
    needsAdmin: false,
    run: async ({ deskline }) => {
      const endpoint = await deskline.webhookEndpoints.create({
        url: "https://deskline-trigger.invalid/paused",
        description: LABEL,
        events: ["ticket.created"],
      });
      await deskline.webhookEndpoints.update(endpoint.id, { status: "disabled" });
      await deskline.webhookEndpoints.delete(endpoint.id);
      return { endpoint: endpoint.id };
    },
  },
  {
    type: "webhook_delivery.failed",
    summary:
      "creates an endpoint to a .invalid host and a contact: the event follows once the delivery's retries run out (WEBHOOK_RETRY_DELAYS)",
    needsAdmin: false,
    run: ({ deskline }) => unreachableEndpoint(deskline, 1),
  },
  {
    type: "webhook_endpoint.failing",
    summary:
      "creates an endpoint to a .invalid host and 5 contacts: the event follows once their retries run out (WEBHOOK_RETRY_DELAYS)",
    needsAdmin: false,
    run: ({ deskline }) => unreachableEndpoint(deskline, 5),
  },
];
