import { type ContactDoc, Contacts, uniqueKeysOf } from "../src/contacts/contacts.js";
import { STRICT_NO_COUNTRY } from "../src/contacts/phone.js";
import { contactSearchKeys } from "../src/contacts/search-keys.js";
import { newId } from "../src/platform/ids.js";
import { parsePhone } from "../src/platform/phone-numbers.js";
import { Tombstones } from "../src/records/tombstones.js";
import { type BenchContext, seedRelay } from "./environment.js";
import type { Baseline, Dataset, Scenario } from "./scenario.js";

/**
 * The contact list's `search` in a workspace of BENCH_SEARCH_CONTACTS contacts (100,000 unless
 * set), people with varied names, emails and phones. Seeded through the driver in batches of a
 * thousand, each document a copy of one the server stored, with the fields, unique keys and
 * search keys the server's own functions make for it (an HTTP seed of 100,000 would outlast the
 * measurements). Rows: a surname prefix (a couple of dozen matches, a page of 10), the same
 * against the regex query `search` ran before it had keys (what it cost then), and a one-letter
 * prefix that matches a large part of the workspace (the first page only).
 */

const PLANS = ["free", "pro", "team"];
const COUNT = Number(process.env.BENCH_SEARCH_CONTACTS ?? 100_000);
const FIRST = ["José", "Zoë", "Ana", "Björn", "Chloé", "Dmitri", "Élodie", "Farah", "Grace", "Hiro"];
// 16 syllables with distinct first letters: three make 4,096 surnames, and five letters name one.
const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "sa",
  "ti",
  "vo",
  "ze",
  "ba",
  "do",
  "fe",
  "gi",
  "ho",
  "ju",
  "py",
];

/** Person `i` of the dataset: the same every time, so a request can name one it was seeded with. */
export function person(i: number) {
  const syllable = (shift: number) => SYLLABLES[Math.floor(i / 16 ** shift) % 16] as string;
  const surname = `${syllable(0)}${syllable(1)}${syllable(2)}`;
  const first = FIRST[Math.floor(i / 4096) % FIRST.length] as string;
  return {
    name: `${first} ${surname[0]?.toUpperCase()}${surname.slice(1)}`,
    email: `${first.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()}.${surname}.${i}@company-${i % 500}.test`,
    phone: `(415) 555-${String(i % 10_000).padStart(4, "0")}`,
    surname,
  };
}

/** The fields person `i` is stored with, from a template the server stored (its shape and defaults). */
function stored(template: ContactDoc, workspaceId: string, i: number): ContactDoc {
  const { name, email, phone } = person(i);
  const parsed = parsePhone(phone, "US");
  const now = new Date();
  const doc: ContactDoc = {
    ...template,
    _id: newId("con"),
    name,
    email,
    email_lc: email,
    phone,
    phone_e164: parsed?.e164 ?? null,
    phone_country: parsed?.country ?? null,
    // For the search API's rows: a fifth are leads, a fiftieth vip, plans and seats spread evenly.
    lifecycle_stage: i % 5 === 0 ? "lead" : "customer",
    tags: i % 50 === 0 ? ["vip"] : [],
    custom_fields: { plan: PLANS[i % PLANS.length] as string, seats: i % 100 },
    created_at: now,
    updated_at: now,
  };
  doc.unique_keys = uniqueKeysOf(workspaceId, doc).map((k) => k.key);
  doc.search_keys = contactSearchKeys(doc);
  return doc;
}

const people: Dataset = {
  name: `${COUNT.toLocaleString("en")} people`,
  async seed(context) {
    const contacts = new Contacts(context.db, seedRelay(context.db), new Tombstones(context.db));
    const made = await contacts.create(context.workspaceId, { name: "Template" }, STRICT_NO_COUNTRY);
    const template = (await context.db
      .collection<ContactDoc>("contacts")
      .findOne({ _id: made._id })) as ContactDoc;
    await contacts.delete(context.workspaceId, made._id);
    const ids: string[] = [];
    for (let start = 0; start < COUNT; start += 1000) {
      const batch = [];
      for (let i = start; i < Math.min(start + 1000, COUNT); i++)
        batch.push(stored(template, context.workspaceId, i));
      await context.db.collection<ContactDoc>("contacts").insertMany(batch, { ordered: false });
      ids.push(...batch.map((doc) => doc._id));
      if (ids.length % 10_000 === 0)
        process.stderr.write(`bench: seeded ${ids.length.toLocaleString("en")} people\n`);
    }
    return ids;
  },
};

/** The surname prefix request `n` searches for: five letters, one surname's, a different person each time. */
const surnamePrefix = (n: number) => person((n * 7919) % COUNT).surname.slice(0, 5);

/** The search API's filter of the OR row: paying leads, or anyone vip (about 15 % of people). */
const PAYING_LEADS_OR_VIP = [
  {
    filters: [
      { field: "lifecycle_stage", operator: "eq", value: "lead" },
      { field: "custom_fields.plan", operator: "in", values: ["pro", "team"] },
    ],
  },
  { filters: [{ field: "tags", operator: "eq", value: "vip" }] },
];

/** The driver's page of a search: `query(n)` newest first, 10 + 1. */
function findBaseline(label: string, query: (n: number) => Record<string, unknown>): Baseline {
  return {
    label,
    async prepare({ db, workspaceId }: BenchContext) {
      const contacts = db.collection("contacts");
      return (n) =>
        contacts
          .find({ ...query(n), workspace_id: workspaceId })
          .sort({ _id: -1 })
          .limit(11)
          .toArray();
    },
  };
}

const pattern = (n: number) => ({ $regex: surnamePrefix(n), $options: "i" });

export const searchScenarios: Scenario[] = [
  {
    name: "search-surname",
    dataset: people,
    method: "GET",
    path: "/open/v1/contacts?limit=10&search=kalo",
    pathOf: (n) => `/open/v1/contacts?limit=10&search=${surnamePrefix(n)}`,
    baseline: findBaseline("find({workspace_id, search_keys}).sort({_id:-1}).limit(11)", (n) => ({
      search_keys: surnamePrefix(n),
    })),
  },
  {
    // The same requests against what `search` read before the keys: a regex over three fields.
    name: "search-surname-vs-regex",
    dataset: people,
    method: "GET",
    path: "/open/v1/contacts?limit=10&search=kalo",
    pathOf: (n) => `/open/v1/contacts?limit=10&search=${surnamePrefix(n)}`,
    baseline: findBaseline("find({workspace_id, $or: [name, email, phone regex]}) (before)", (n) => ({
      $or: [{ name: pattern(n) }, { email: pattern(n) }, { phone: pattern(n) }],
    })),
  },
  {
    name: "search-one-letter",
    dataset: people,
    method: "GET",
    path: "/open/v1/contacts?limit=10&search=k",
    baseline: findBaseline("find({workspace_id, search_keys: 'k'}).sort({_id:-1}).limit(11)", () => ({
      search_keys: "k",
    })),
  },
  {
    // The search API: an OR of two groups, the first page of a broad match.
    name: "search-api-or",
    dataset: people,
    method: "POST",
    path: "/open/v1/contacts/search",
    body: { filter_groups: PAYING_LEADS_OR_VIP, limit: 10 },
    baseline: findBaseline(
      "find({workspace_id, $or: [{stage, plan $in}, {tags}]}).sort({_id:-1}).limit(11)",
      () => ({
        $or: [{ lifecycle_stage: "lead", "custom_fields.plan": { $in: ["pro", "team"] } }, { tags: "vip" }],
      }),
    ),
  },
  {
    // The search API: a surname prefix (`query`) ANDed with a filter, a different person each time.
    name: "search-api-surname-and",
    dataset: people,
    method: "POST",
    path: "/open/v1/contacts/search",
    bodyOf: (n) => ({
      query: surnamePrefix(n),
      filter_groups: [{ filters: [{ field: "lifecycle_stage", operator: "eq", value: "customer" }] }],
      limit: 10,
    }),
    baseline: findBaseline(
      "find({workspace_id, search_keys, lifecycle_stage}).sort({_id:-1}).limit(11)",
      (n) => ({
        search_keys: surnamePrefix(n),
        lifecycle_stage: "customer",
      }),
    ),
  },
];
