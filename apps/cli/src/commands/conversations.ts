// `deskline conversations …`: read conversations and their messages, answer, add internal notes.
import { readFileSync } from "node:fs";
import type { Conversation, Message } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { UsageError } from "../errors.js";
import { type Column, printObject } from "../output.js";
import { examples, getCommand, listingCommand, nestedListingCommand } from "./kit.js";

const COLUMNS: Column<Conversation>[] = [
  { header: "ID", value: (c) => c.id },
  { header: "STATUS", value: (c) => c.status },
  { header: "CHANNEL", value: (c) => c.channel },
  { header: "CONTACT", value: (c) => c.contact_id },
  { header: "UNREAD", value: (c) => c.unread },
  { header: "CREATED", value: (c) => c.created_at },
];

const MESSAGE_COLUMNS: Column<Message>[] = [
  { header: "ID", value: (m) => m.id },
  { header: "DIRECTION", value: (m) => m.direction },
  { header: "NOTE", value: (m) => m.internal_note },
  { header: "CREATED", value: (m) => m.created_at },
  { header: "BODY", value: (m) => (m.body.length > 60 ? `${m.body.slice(0, 59)}…` : m.body) },
];

export function register(conversations: Command): void {
  examples(
    conversations,
    "deskline conversations list --unread true",
    "deskline conversations reply conv_… -m 'On it!'",
  );
  listingCommand(
    conversations,
    {
      name: "list",
      description: "list conversations, newest first",
      operation: "listConversations",
      columns: COLUMNS,
      examples: ["deskline conversations list --status open --channel email --unread true"],
    },
    (d, query) => d.conversations.list(query),
  );
  getCommand(
    conversations,
    { noun: "conversation", id: "conv", example: "deskline conversations get conv_0VbeYBCu9tPuFypVLWBsJN" },
    (d, id) => d.conversations.get(id),
  );
  nestedListingCommand(
    conversations,
    {
      name: "messages",
      description: "list a conversation's messages, newest first",
      argument: "conversation id",
      operation: "listMessages",
      columns: MESSAGE_COLUMNS,
      examples: ["deskline conversations messages conv_0VbeYBCu9tPuFypVLWBsJN --limit 20 --json"],
    },
    (d, id, query) => d.conversations.messages.list(id, query),
  );
  messageCommand(conversations, "reply", false);
  messageCommand(conversations, "note", true);
}

/** `reply` (an agent message to the contact) and `note` (an internal note): the text from -m or stdin. */
function messageCommand(conversations: Command, verb: "reply" | "note", note: boolean): void {
  examples(
    conversations
      .command(verb)
      .description(
        note ? "add an internal note (not sent to the contact)" : "send an agent message to the contact",
      )
      .argument("<id>", "conversation id")
      .option("-m, --body <text>", "the message text; - reads stdin")
      .action((id: string, options: { body?: string }, command: Command) =>
        runMessage(id, options.body, note, command),
      ),
    `deskline conversations ${verb} conv_0VbeYBCu9tPuFypVLWBsJN -m ${note ? "'Refund approved by finance'" : "'Thanks, fixed now!'"}`,
  );
}

async function runMessage(id: string, text: string | undefined, note: boolean, command: Command) {
  if (text === undefined) throw new UsageError("give the message with -m/--body <text> (- reads stdin)");
  const body = text === "-" ? readFileSync(0, "utf8") : text;
  const deskline = await clientFor(command);
  const message = await deskline.conversations.messages.create(id, { body, internal_note: note });
  printObject(message, Boolean(globalsOf(command).json));
}
