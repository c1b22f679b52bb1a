import { Contacts } from "../src/contacts/contacts.js";
import { STRICT_NO_COUNTRY } from "../src/contacts/phone.js";
import { type ConversationDoc, Conversations } from "../src/conversations/conversations.js";
import { type MessageDoc, Messages, newMessage } from "../src/conversations/messages.js";
import { Tombstones } from "../src/records/tombstones.js";
import { type RequestContext, seedRelay } from "./environment.js";
import type { Dataset, Scenario } from "./scenario.js";
import { seededId } from "./seeded.js";

const CHANNELS = ["email", "chat", "sms", "whatsapp"];
const CONTACTS = 50;

/**
 * `count` conversations made by the server's own code (conversations/conversations.ts, the path the admin
 * API takes), each with its first customer message; every other one has an agent reply, so half
 * are unread. Spread over a few contacts and channels, as a helpdesk's are.
 */
function conversationsDataset(count: number): Dataset {
  return {
    name: `${count.toLocaleString("en")} conversations`,
    async seed(context) {
      const relay = seedRelay(context.db);
      const contacts = new Contacts(context.db, relay, new Tombstones(context.db));
      const messages = new Messages(context.db, relay);
      const conversations = new Conversations(context.db, { contacts, messages }, relay);
      const contactIds: string[] = [];
      for (let i = 0; i < CONTACTS; i++) {
        contactIds.push(
          (await contacts.create(context.workspaceId, { name: `Bench Customer ${i}` }, STRICT_NO_COUNTRY))
            ._id,
        );
      }
      const ids: string[] = [];
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const n = next++;
          const { conversation } = await conversations.start(context.workspaceId, {
            contact_id: contactIds[n % CONTACTS] as string,
            channel: CHANNELS[n % CHANNELS.length] as string,
            subject: `Bench conversation ${n}`,
            message: { body: `Hello, this is customer message ${n}.` },
          });
          if (n % 2) {
            await conversations.addMessage(conversation, {
              body: "Thanks, we are on it.",
              internal_note: false,
              author_type: "api",
            });
          }
          ids.push(conversation._id);
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      return ids;
    },
  };
}

const dataset = conversationsDataset(1_000);

const messagesPath = (n: number, context: RequestContext) =>
  `/open/v1/conversations/${seededId(n, context)}/messages`;

export const conversationScenarios: Scenario[] = [
  // Reads first, so each sees exactly the seeded data; the send scenario adds messages last.
  {
    name: "list-conversations-unread",
    dataset,
    method: "GET",
    path: "/open/v1/conversations?status=open&unread=true&limit=10",
    baseline: {
      label: "find({workspace_id, status, unread}).sort({_id:-1}).limit(11)",
      async prepare({ db, workspaceId }) {
        const conversations = db.collection<ConversationDoc>("conversations");
        return () =>
          conversations
            .find({ workspace_id: workspaceId, status: "open", unread: true })
            .sort({ _id: -1 })
            .limit(11)
            .toArray();
      },
    },
  },
  {
    name: "list-messages",
    dataset,
    method: "GET",
    path: "/open/v1/conversations/{id}/messages",
    pathOf: messagesPath,
    baseline: {
      // The API finds the conversation in the workspace (404 otherwise), then reads one page.
      label: "findOne(conversation) + find(messages).sort().limit(11)",
      async prepare(context) {
        const conversations = context.db.collection<ConversationDoc>("conversations");
        const messages = context.db.collection<MessageDoc>("messages");
        return async (n) => {
          const _id = seededId(n, context);
          await conversations.findOne({ _id, workspace_id: context.workspaceId });
          return messages
            .find({ workspace_id: context.workspaceId, conversation_id: _id })
            .sort({ _id: -1 })
            .limit(11)
            .toArray();
        };
      },
    },
  },
  {
    name: "send-message",
    dataset,
    method: "POST",
    path: "/open/v1/conversations/{id}/messages",
    pathOf: messagesPath,
    body: { body: "Thanks, a corrected invoice is on its way.", internal_note: false },
    baseline: {
      // What the API's database work is: find the conversation, store the message, move the
      // conversation in one conditional update.
      label: "findOne + insertOne + findOneAndUpdate",
      async prepare(context) {
        const conversations = context.db.collection<ConversationDoc>("conversations");
        const messages = context.db.collection<MessageDoc>("messages");
        return async (n) => {
          const conversation = await conversations.findOne({
            _id: seededId(n, context),
            workspace_id: context.workspaceId,
          });
          if (!conversation) throw new Error("a seeded conversation is gone");
          const message = newMessage(conversation, {
            body: `Raw reply ${n}`,
            internal_note: false,
            author_type: "api",
          });
          await messages.insertOne(message);
          const at = message.created_at;
          return conversations.findOneAndUpdate(
            { _id: conversation._id, unread_source_id: { $lt: message._id } },
            {
              $set: { unread: false, unread_source_id: message._id },
              $max: { last_message_at: at, updated_at: at },
            },
            { returnDocument: "after" },
          );
        };
      },
    },
  },
];
