import { type ContactDoc, uniqueKeysOf } from "../src/db/contacts.js";
import { newId } from "../src/domain/ids.js";
import { type BenchContext, seedMany } from "./environment.js";
import type { Scenario } from "./scenario.js";

/** A contact as a client typically creates one: a few fields, one of them unique. */
export const contactBody = (n: number, { runId }: BenchContext) => ({
  name: `Bench Contact ${n}`,
  email: `bench-${runId}-${n}@example.com`,
  phone: "+14155550100",
  tags: ["bench", `cohort-${n % 10}`],
  custom_fields: { plan: "pro", seats: 5 },
});

const SEEDED = 1000;

export const contactScenarios: Scenario[] = [
  {
    name: "list-contacts",
    method: "GET",
    path: "/open/v1/contacts?limit=10",
    seed: (context) =>
      seedMany(context, SEEDED, "/open/v1/contacts", (n) =>
        contactBody(n, { ...context, runId: `${context.runId}-seed` }),
      ),
    baseline: {
      label: "find({workspace_id}).sort({_id:-1}).limit(11)",
      async prepare({ db, workspaceId }) {
        const contacts = db.collection("contacts");
        // limit 10 + 1: the extra document is how the API knows `has_more`.
        return () => contacts.find({ workspace_id: workspaceId }).sort({ _id: -1 }).limit(11).toArray();
      },
    },
  },
  {
    name: "create-contact",
    method: "POST",
    path: "/open/v1/contacts",
    bodyOf: contactBody,
    baseline: {
      label: "insertOne",
      async prepare(context) {
        // A document exactly as the server stores one, copied under fresh ids into a workspace
        // of its own (same collection and indexes, but the API's lists stay untouched).
        const made = await context.api<{ id: string }>(
          "POST",
          "/open/v1/contacts",
          contactBody(0, { ...context, runId: `${context.runId}-template` }),
        );
        const contacts = context.db.collection<ContactDoc>("contacts");
        const template = await contacts.findOne({ _id: made.id });
        if (!template) throw new Error(`contact ${made.id} is not in the contacts collection`);
        const workspaceId = newId("ws");
        return (n) => {
          const email = `raw-${context.runId}-${n}@example.com`;
          const now = new Date();
          return contacts.insertOne({
            ...template,
            _id: newId("con"),
            workspace_id: workspaceId,
            version: 0,
            name: `Raw Contact ${n}`,
            email,
            email_lc: email,
            // Its own email's key in the unique index, as the server writes it.
            unique_keys: uniqueKeysOf(workspaceId, { email_lc: email, external_ids: {} }).map((k) => k.key),
            created_at: now,
            updated_at: now,
          });
        };
      },
    },
  },
];
