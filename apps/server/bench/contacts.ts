import { type ContactDoc, Contacts, uniqueKeysOf } from "../src/contacts/contacts.js";
import { STRICT_NO_COUNTRY } from "../src/contacts/phone.js";
import { newId } from "../src/platform/ids.js";
import { Tombstones } from "../src/records/tombstones.js";
import { type BenchContext, type RequestContext, seedRelay } from "./environment.js";
import { createContactFloor, getByIdFloor } from "./http-floor.js";
import type { Dataset, Scenario } from "./scenario.js";
import { getByIdBaseline, patchByVersionBaseline, seededId } from "./seeded.js";

/** A contact as a client typically creates one: a few fields, one of them unique. */
export const contactBody = (n: number, { runId }: Pick<RequestContext, "runId">) => ({
  name: `Bench Contact ${n}`,
  email: `bench-${runId}-${n}@example.com`,
  phone: "+14155550100",
  tags: ["bench", `cohort-${n % 10}`],
  custom_fields: { plan: "pro", seats: 5 },
});

/**
 * `count` contacts made by the server's own code (contacts/contacts.ts, the same path the API's create
 * takes after validation), many at a time: seeding 10,000 through HTTP would take longer than
 * the measurements.
 */
function contactsDataset(count: number): Dataset {
  return {
    name: `${count.toLocaleString("en")} contacts`,
    async seed(context) {
      const contacts = new Contacts(context.db, seedRelay(context.db), new Tombstones(context.db));
      const ids: string[] = [];
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const n = next++;
          const body = contactBody(n, { ...context, runId: `${context.runId}-seed` });
          ids.push((await contacts.create(context.workspaceId, body, STRICT_NO_COUNTRY))._id);
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      return ids;
    },
  };
}

const small = contactsDataset(1_000);
const large = contactsDataset(10_000);
/** One of the seeded contacts, a different one each request. */
const seededPath = (n: number, context: RequestContext) => `/open/v1/contacts/${seededId(n, context)}`;

const listBaseline = {
  label: "find({workspace_id}).sort({_id:-1}).limit(11)",
  async prepare({ db, workspaceId }: BenchContext) {
    const contacts = db.collection("contacts");
    // limit 10 + 1: the extra document is how the API knows `has_more`.
    return () => contacts.find({ workspace_id: workspaceId }).sort({ _id: -1 }).limit(11).toArray();
  },
};

export const contactScenarios: Scenario[] = [
  {
    name: "list-contacts-1k",
    dataset: small,
    method: "GET",
    path: "/open/v1/contacts?limit=10",
    baseline: listBaseline,
  },
  // The 10,000-contact dataset: reads first, so each sees exactly that many; create last.
  {
    name: "list-contacts",
    dataset: large,
    method: "GET",
    path: "/open/v1/contacts?limit=10",
    baseline: listBaseline,
  },
  {
    name: "get-contact",
    dataset: large,
    method: "GET",
    path: "/open/v1/contacts/{id}",
    pathOf: seededPath,
    baseline: getByIdBaseline("contacts"),
    floor: getByIdFloor("contacts"),
  },
  // The rate limiter's cost: get-contact with the buckets per process, then shared in
  // MongoDB, at a limit the load never reaches (every request still takes its token).
  ...(["process", "shared"] as const).map(
    (where): Scenario => ({
      name: `get-contact-limit-${where}`,
      dataset: large,
      method: "GET",
      path: "/open/v1/contacts/{id}",
      pathOf: seededPath,
      baseline: getByIdBaseline("contacts"),
      server: {
        rateLimitPerSecond: 1_000_000,
        rateLimitBurst: 1_000_000,
        rateLimitShared: where === "shared",
      },
    }),
  ),
  {
    name: "patch-contact",
    dataset: large,
    method: "PATCH",
    path: "/open/v1/contacts/{id}",
    pathOf: seededPath,
    // A new value every time, so every request writes.
    bodyOf: (n) => ({ lifecycle_stage: `stage-${n}` }),
    baseline: patchByVersionBaseline("contacts", "lifecycle_stage"),
  },
  {
    name: "create-contact",
    dataset: large,
    method: "POST",
    path: "/open/v1/contacts",
    bodyOf: contactBody,
    floor: createContactFloor(),
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
