import { randomBytes } from "node:crypto";
import type { Collection } from "mongodb";
import { describe, expect } from "vitest";
import { itAnswersAsTheModel } from "./helpers/database.js";

/**
 * The lists' query shape (workspace equality, other filters, `_id` bounds, sort on `_id`, limit)
 * answered exactly as MongoDB answers it, through every kind of write. On mongo-java-server
 * those queries walk the per-workspace `_id` index that scripts/mongo-java-server/
 * WorkspaceIndex.java adds, so this checks that index against a model kept here; on MongoDB it
 * checks nothing but MongoDB. The H2 file backend is checked here whatever the run's database.
 */
interface Doc {
  _id: string;
  workspace_id: string | string[];
  status: string;
}

const WORKSPACES = ["ws_a", "ws_b", "ws_c"];
const STATUSES = ["New", "Open", "Solved"];
const pick = <T>(values: T[]): T => values[Math.floor(Math.random() * values.length)] as T;
// Random, so the order of ids is not the order of inserts.
const newDocId = () => `rec_${randomBytes(6).toString("hex")}`;

type Bounds = Partial<Record<"$lt" | "$lte" | "$gt" | "$gte", string>>;

interface ListQuery {
  workspace: string;
  status?: string;
  bounds?: Bounds;
  order: 1 | -1;
  skip: number;
  limit: number;
}

function expected(model: Map<string, Doc>, q: ListQuery): string[] {
  const inBounds = (id: string) =>
    (q.bounds?.$lt === undefined || id < q.bounds.$lt) &&
    (q.bounds?.$lte === undefined || id <= q.bounds.$lte) &&
    (q.bounds?.$gt === undefined || id > q.bounds.$gt) &&
    (q.bounds?.$gte === undefined || id >= q.bounds.$gte);
  const ids = [...model.values()]
    .filter((doc) => [doc.workspace_id].flat().includes(q.workspace))
    .filter((doc) => q.status === undefined || doc.status === q.status)
    .map((doc) => doc._id)
    .filter(inBounds)
    .sort();
  if (q.order === -1) ids.reverse();
  return ids.slice(q.skip, q.skip + q.limit);
}

async function actual(collection: Collection<Doc>, q: ListQuery): Promise<string[]> {
  const filter: Record<string, unknown> = { workspace_id: q.workspace };
  if (q.status) filter.status = q.status;
  if (q.bounds) filter._id = q.bounds;
  const docs = await collection.find(filter).sort({ _id: q.order }).skip(q.skip).limit(q.limit).toArray();
  return docs.map((doc) => doc._id);
}

/** Many random list queries, each compared with the model. */
async function checkQueries(collection: Collection<Doc>, model: Map<string, Doc>): Promise<void> {
  const ids = [...model.keys()];
  for (let i = 0; i < 60; i++) {
    const bounds: Bounds = {};
    for (const op of ["$lt", "$lte", "$gt", "$gte"] as const) {
      // Existing ids (inclusive bounds matter there) and made-up ones; sometimes crossing.
      if (Math.random() < 0.3) bounds[op] = Math.random() < 0.6 ? pick(ids) : newDocId();
    }
    const q: ListQuery = {
      workspace: pick(WORKSPACES),
      ...(Math.random() < 0.4 ? { status: pick(STATUSES) } : {}),
      ...(Object.keys(bounds).length ? { bounds } : {}),
      order: pick([1, -1] as const),
      skip: pick([0, 0, 3]),
      limit: pick([1, 11, 1000]),
    };
    expect(await actual(collection, q), JSON.stringify(q)).toEqual(expected(model, q));
  }
  // A whole list paged through as the API pages: each page after the last id of the one before.
  const workspace = pick(WORKSPACES);
  const all = expected(model, { workspace, order: -1, skip: 0, limit: 10_000 });
  const paged: string[] = [];
  for (let last: string | undefined; ; ) {
    const page = await actual(collection, {
      workspace,
      order: -1,
      skip: 0,
      limit: 7,
      ...(last ? { bounds: { $lt: last } } : {}),
    });
    paged.push(...page);
    last = page.at(-1);
    if (page.length < 7) break;
  }
  expect(paged).toEqual(all);
}

/** Every kind of write, each followed by the model check. */
async function exercise(collection: Collection<Doc>, model: Map<string, Doc>): Promise<void> {
  const docs = Array.from({ length: 300 }, () => ({
    _id: newDocId(),
    workspace_id: pick(WORKSPACES),
    status: pick(STATUSES),
  }));
  await collection.insertMany(docs.slice(0, 200));
  for (const doc of docs.slice(200)) await collection.insertOne(doc);
  for (const doc of docs) model.set(doc._id, { ...doc });
  await checkQueries(collection, model);

  // Updates, one of them moving records to another workspace; deletes by id and by filter.
  const ids = [...model.keys()];
  for (const id of ids.slice(0, 40)) {
    const set = {
      status: pick(STATUSES),
      ...(Math.random() < 0.5 ? { workspace_id: pick(WORKSPACES) } : {}),
    };
    await collection.updateOne({ _id: id }, { $set: set });
    Object.assign(model.get(id) as Doc, set);
  }
  for (const id of ids.slice(40, 60)) {
    await collection.deleteOne({ _id: id });
    model.delete(id);
  }
  await collection.deleteMany({ workspace_id: "ws_c", status: "Solved" });
  for (const [id, doc] of model) if (doc.workspace_id === "ws_c" && doc.status === "Solved") model.delete(id);
  // Re-inserted under a deleted id: the slot is reused, the index must follow.
  const reused = { _id: ids[45] as string, workspace_id: "ws_a", status: "New" };
  await collection.insertOne(reused);
  model.set(reused._id, { ...reused });
  await checkQueries(collection, model);

  // A document in two workspaces at once (an array matches each of its values): the fallback
  // must still find it, whatever index it keeps; and again once it is gone.
  const shared = { _id: newDocId(), workspace_id: ["ws_a", "ws_b"], status: "Open" };
  await collection.insertOne(shared);
  model.set(shared._id, { ...shared });
  await checkQueries(collection, model);
  await collection.deleteOne({ _id: shared._id });
  model.delete(shared._id);
  await checkQueries(collection, model);
}

describe("list queries on the embedded database's workspace index", () => {
  itAnswersAsTheModel<Doc>(
    "answer as MongoDB does through inserts, updates, deletes and irregular documents",
    exercise,
    async (collection, model) => {
      expect(await collection.countDocuments()).toBe(model.size);
      await checkQueries(collection, model);
    },
  );
});
