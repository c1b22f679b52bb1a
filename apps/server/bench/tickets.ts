import { newId } from "../src/platform/ids.js";
import type { TicketDoc } from "../src/tickets/tickets.js";
import { type BenchContext, type RequestContext, seedMany } from "./environment.js";
import { getByIdFloor } from "./http-floor.js";
import type { Dataset, Scenario } from "./scenario.js";
import { getByIdBaseline, patchByVersionBaseline, seededId } from "./seeded.js";

/** Half of the seeded tickets are `New`, the rest spread over other statuses. */
const STATUSES = ["New", "On you", "New", "Solved"] as const;

/**
 * The contact every bench ticket points at (so creates pay for the `contact_id` check, as real
 * ones do), made once per context: each scenario runs in a workspace (and database) of its own.
 */
async function ensureContact(context: BenchContext): Promise<string> {
  if (!context.contactId) {
    const body = { name: `Ticket bench ${context.runId}` };
    context.contactId = (await context.api<{ id: string }>("POST", "/open/v1/contacts", body)).id;
  }
  return context.contactId;
}

/** A ticket as a client typically creates one: linked to a contact, a few labels. */
const ticketBody = (n: number, context: RequestContext) => ({
  subject: `Bench ticket ${n}`,
  priority: n % 2 ? "normal" : "high",
  category: "billing",
  contact_id: context.contactId,
  tags: ["bench", `cohort-${n % 10}`],
});

const SEEDED = 1000;

/** SEEDED tickets in the statuses above, made through the API: what get and patch read. */
const dataset: Dataset = {
  name: `${SEEDED.toLocaleString("en")} tickets`,
  async seed(context) {
    await ensureContact(context);
    return seedMany(context, SEEDED, "/open/v1/tickets", (n) => ({
      ...ticketBody(n, context),
      status: STATUSES[n % STATUSES.length],
    }));
  },
};
const seededPath = (n: number, context: RequestContext) => `/open/v1/tickets/${seededId(n, context)}`;

export const ticketScenarios: Scenario[] = [
  {
    // First, as list-contacts: with exactly SEEDED tickets its numbers do not depend on how many
    // the create scenario inserted before.
    name: "list-tickets-new",
    method: "GET",
    path: "/open/v1/tickets?status=New&limit=10",
    async seed(context) {
      await ensureContact(context);
      const have = await context.db
        .collection("tickets")
        .countDocuments({ workspace_id: context.workspaceId });
      await seedMany(context, Math.max(0, SEEDED - have), "/open/v1/tickets", (n) => ({
        ...ticketBody(n, context),
        status: STATUSES[n % STATUSES.length],
      }));
    },
    baseline: {
      label: "find({workspace_id, status}).sort({_id:-1}).limit(11)",
      async prepare({ db, workspaceId }) {
        const tickets = db.collection("tickets");
        return () =>
          tickets.find({ workspace_id: workspaceId, status: "New" }).sort({ _id: -1 }).limit(11).toArray();
      },
    },
  },
  {
    name: "create-ticket",
    method: "POST",
    path: "/open/v1/tickets",
    bodyOf: ticketBody,
    async seed(context) {
      await ensureContact(context);
    },
    baseline: {
      // The API checks that `contact_id` is the workspace's, then inserts.
      label: "countDocuments(contact) + insertOne",
      async prepare(context) {
        // A document exactly as the server stores one, copied under fresh ids into a workspace
        // of its own (same collection and indexes, but the API's lists stay untouched).
        const made = await context.api<{ id: string }>("POST", "/open/v1/tickets", ticketBody(0, context));
        const tickets = context.db.collection<TicketDoc>("tickets");
        const contacts = context.db.collection<{ _id: string; workspace_id: string }>("contacts");
        const template = await tickets.findOne({ _id: made.id });
        if (!template) throw new Error(`ticket ${made.id} is not in the tickets collection`);
        const workspaceId = newId("ws");
        return async (n) => {
          await contacts.countDocuments(
            { _id: context.contactId, workspace_id: context.workspaceId },
            { limit: 1 },
          );
          const now = new Date();
          return tickets.insertOne({
            ...template,
            _id: newId("tkt"),
            workspace_id: workspaceId,
            subject: `Raw ticket ${n}`,
            created_at: now,
            updated_at: now,
          });
        };
      },
    },
  },
  {
    name: "get-ticket",
    dataset,
    method: "GET",
    path: "/open/v1/tickets/{id}",
    pathOf: seededPath,
    baseline: getByIdBaseline("tickets"),
    floor: getByIdFloor("tickets"),
  },
  {
    name: "patch-ticket",
    dataset,
    method: "PATCH",
    path: "/open/v1/tickets/{id}",
    pathOf: seededPath,
    // A new value every time, so every request writes (and emits ticket.updated); `category`
    // is free text, so even a terminal ticket accepts it.
    bodyOf: (n) => ({ category: `category-${n}` }),
    baseline: patchByVersionBaseline("tickets", "category"),
  },
];
