import { randomBytes } from "node:crypto";
import type { Collection } from "mongodb";
import { describe, expect } from "vitest";
import { itAnswersAsTheModel } from "./helpers/database.js";

/**
 * A contact search's query shape (workspace equality, `search_keys` equal to a key or `$all` of
 * several, maybe another filter, `_id` bounds, sort on `_id`, limit), and an endpoint's newest
 * deliveries' (`endpoint_id` equal to one endpoint instead of keys), answered exactly as MongoDB
 * answers them, through writes that add, change and drop keys and endpoints. On mongo-java-server
 * those queries walk the per-workspace, per-value indexes of
 * scripts/mongo-java-server/FieldValueIndex.java, so this checks them against a model kept here;
 * on MongoDB it checks MongoDB. The H2 file backend is checked here whatever the run's database.
 */
interface Doc {
  _id: string;
  workspace_id: string;
  status: string;
  search_keys?: unknown[];
  endpoint_id?: string;
}

const WORKSPACES = ["ws_a", "ws_b"];
const KEYS = ["a", "ab", "abc", "b", "bo", "c", "rare"];
const STATUSES = ["lead", "customer"];
const ENDPOINTS = ["we_busy", "we_some", "we_rare"];
const pick = <T>(values: T[]): T => values[Math.floor(Math.random() * values.length)] as T;
const someKeys = () => KEYS.filter((key) => key !== "rare" && Math.random() < 0.4);
// Random, so the order of ids is not the order of inserts.
const newDocId = () => `con_${randomBytes(6).toString("hex")}`;

interface SearchQuery {
  workspace: string;
  /** Keys to search for, or none: then `endpoint` alone narrows. */
  keys: string[];
  endpoint?: string;
  status?: string;
  below?: string;
  above?: string;
  order: 1 | -1;
  limit: number;
}

/** What MongoDB answers: an array holds its elements (a nested array is not looked into). */
const holds = (doc: Doc, key: string) => Array.isArray(doc.search_keys) && doc.search_keys.includes(key);

function expected(model: Map<string, Doc>, q: SearchQuery): string[] {
  const ids = [...model.values()]
    .filter((doc) => doc.workspace_id === q.workspace && q.keys.every((key) => holds(doc, key)))
    .filter((doc) => q.endpoint === undefined || doc.endpoint_id === q.endpoint)
    .filter((doc) => q.status === undefined || doc.status === q.status)
    .map((doc) => doc._id)
    .filter((id) => (q.below === undefined || id < q.below) && (q.above === undefined || id > q.above))
    .sort();
  if (q.order === -1) ids.reverse();
  return ids.slice(0, q.limit);
}

async function actual(collection: Collection<Doc>, q: SearchQuery): Promise<string[]> {
  const filter: Record<string, unknown> = { workspace_id: q.workspace };
  if (q.keys.length > 0) filter.search_keys = q.keys.length === 1 ? q.keys[0] : { $all: q.keys };
  if (q.endpoint) filter.endpoint_id = q.endpoint;
  if (q.status) filter.status = q.status;
  const bounds = { ...(q.below ? { $lt: q.below } : {}), ...(q.above ? { $gt: q.above } : {}) };
  if (Object.keys(bounds).length) filter._id = bounds;
  const docs = await collection.find(filter).sort({ _id: q.order }).limit(q.limit).toArray();
  return docs.map((doc) => doc._id);
}

/** Random searches compared with the model, then one search paged through as the API pages. */
async function checkSearches(collection: Collection<Doc>, model: Map<string, Doc>): Promise<void> {
  const ids = [...model.keys()];
  for (let i = 0; i < 60; i++) {
    const byEndpoint = Math.random() < 0.4;
    const q: SearchQuery = {
      workspace: pick(WORKSPACES),
      keys: byEndpoint ? [] : Math.random() < 0.6 ? [pick(KEYS)] : [pick(KEYS), pick(KEYS)],
      ...(byEndpoint || Math.random() < 0.2 ? { endpoint: pick(ENDPOINTS) } : {}),
      ...(Math.random() < 0.3 ? { status: pick(STATUSES) } : {}),
      ...(Math.random() < 0.3 ? { below: Math.random() < 0.6 ? pick(ids) : newDocId() } : {}),
      ...(Math.random() < 0.3 ? { above: pick(ids) } : {}),
      order: pick([1, -1] as const),
      limit: pick([1, 6, 1000]),
    };
    expect(await actual(collection, q), JSON.stringify(q)).toEqual(expected(model, q));
  }
  const whole = { workspace: "ws_a", keys: ["a"], order: -1 as const, limit: 10_000 };
  const paged: string[] = [];
  for (let below: string | undefined; ; ) {
    const page = await actual(collection, { ...whole, limit: 5, ...(below ? { below } : {}) });
    paged.push(...page);
    below = page.at(-1);
    if (page.length < 5) break;
  }
  expect(paged).toEqual(expected(model, whole));
  const newest = { workspace: "ws_a", keys: [], endpoint: "we_some", order: -1 as const, limit: 5 };
  expect(await actual(collection, newest)).toEqual(expected(model, newest));
}

async function write(collection: Collection<Doc>, model: Map<string, Doc>, id: string, set: Partial<Doc>) {
  await collection.updateOne({ _id: id }, { $set: set });
  Object.assign(model.get(id) as Doc, set);
}

/** Inserts, key changes, deletes, a reused id and mixed-type keys, each followed by the check. */
async function exercise(collection: Collection<Doc>, model: Map<string, Doc>): Promise<void> {
  const docs = Array.from({ length: 250 }, () => ({
    _id: newDocId(),
    workspace_id: pick(WORKSPACES),
    status: pick(STATUSES),
    search_keys: someKeys(),
    // Most on one endpoint, a few on another, two on a third: an endpoint's newest deliveries
    // read its own on the fallback, however many the others have.
    endpoint_id: Math.random() < 0.8 ? "we_busy" : "we_some",
  }));
  for (const doc of docs.slice(2, 4)) doc.endpoint_id = "we_rare";
  // A rare key on two documents: its search reads those two alone on the fallback.
  for (const doc of docs.slice(0, 2)) doc.search_keys.push("rare");
  await collection.insertMany(docs.slice(0, 200));
  for (const doc of docs.slice(200)) await collection.insertOne(doc);
  for (const doc of docs) model.set(doc._id, structuredClone(doc));
  await checkSearches(collection, model);

  const ids = [...model.keys()];
  // Keys replaced (an old name is no longer found), moved workspaces, keys dropped.
  for (const id of ids.slice(0, 40)) await write(collection, model, id, { search_keys: someKeys() });
  for (const id of ids.slice(40, 50)) await write(collection, model, id, { workspace_id: pick(WORKSPACES) });
  for (const id of ids.slice(50, 55)) {
    await collection.updateOne({ _id: id }, { $unset: { search_keys: "", endpoint_id: "" } });
    delete (model.get(id) as Doc).search_keys;
    delete (model.get(id) as Doc).endpoint_id;
  }
  // Endpoints changed: a document no longer found under its old one.
  for (const id of ids.slice(100, 130)) await write(collection, model, id, { endpoint_id: pick(ENDPOINTS) });
  await collection.updateMany({ search_keys: "bo" }, { $pull: { search_keys: "bo" } });
  for (const doc of model.values())
    if (Array.isArray(doc.search_keys)) doc.search_keys = doc.search_keys.filter((key) => key !== "bo");
  // New documents in the freed slots, holding the keys the deleted ones held: an index that kept
  // a deleted document's entries would walk a slot's new document twice.
  const refills = ids
    .slice(60, 80)
    .map((id): Doc => ({ ...structuredClone(model.get(id) as Doc), _id: newDocId() }));
  for (const id of ids.slice(60, 80)) {
    await collection.deleteOne({ _id: id });
    model.delete(id);
  }
  for (const doc of refills) {
    (doc.search_keys as string[]).push("rare");
    await collection.insertOne(doc);
    model.set(doc._id, structuredClone(doc));
  }
  const reused = { _id: ids[65] as string, workspace_id: "ws_a", status: "lead", search_keys: ["rare", "a"] };
  await collection.insertOne(reused);
  model.set(reused._id, structuredClone(reused));
  await checkSearches(collection, model);

  // An array holding other types: matched as MongoDB matches it. (Not a lone string: the
  // library's matcher, unlike MongoDB, never matches `$all` against one, index or not.)
  await write(collection, model, ids[91] as string, { search_keys: [7, "c", ["a"], null] });
  await checkSearches(collection, model);
}

describe("search and endpoint queries on the embedded database's value indexes", () => {
  itAnswersAsTheModel<Doc>(
    "answer as MongoDB does through inserts, key and endpoint changes, deletes and mixed-type keys",
    exercise,
    async (collection, model) => {
      expect(await collection.countDocuments()).toBe(model.size);
      await checkSearches(collection, model);
    },
  );
});
