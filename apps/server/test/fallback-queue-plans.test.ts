import { randomBytes } from "node:crypto";
import type { Collection } from "mongodb";
import { describe, expect } from "vitest";
import { itAnswersAsTheModel } from "./helpers/database.js";

/**
 * The delivery queue's queries answered exactly as MongoDB answers them, through every kind of
 * write. On mongo-java-server, a lane's claim and the dispatcher's look walk the deliveries in
 * queue order (`due_at`, then `event_id`, then `_id`), and the queries that pin `_id` read it through the `_id` index (scripts/mongo-java-server/
 * QueuePlans.java); this checks both plans against a model kept here. On MongoDB it checks nothing
 * but MongoDB. The H2 file backend is checked here whatever the run's database.
 */
interface Delivery {
  _id: string;
  endpoint_id: string;
  event_id: string;
  status: "pending" | "succeeded";
  attempts: number;
  due_at: Date | null;
}

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms);
const pick = <T>(values: T[]): T => values[Math.floor(Math.random() * values.length)] as T;
let serial = 0;
const randomDelivery = (): Delivery => {
  // Settled deliveries (no `due_at`) among pending ones, many of them due at the same second.
  const settled = Math.random() < 0.3;
  return {
    _id: `dlv_${String(serial++).padStart(6, "0")}_${randomBytes(3).toString("hex")}`,
    endpoint_id: pick(["we_a", "we_a", "we_b", "we_c"]),
    // Few events, so deliveries due at one time often share one: the `_id` breaks those ties.
    event_id: `evt_${String(Math.floor(Math.random() * 20)).padStart(2, "0")}`,
    status: settled ? "succeeded" : "pending",
    attempts: pick([0, 0, 1, 2]),
    due_at: settled ? null : at(Math.floor(Math.random() * 50) * 1000),
  };
};

const isDue = (d: Delivery, now: Date) => d.due_at !== null && d.due_at <= now;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byQueueOrder = (a: Delivery, b: Delivery) =>
  (a.due_at?.getTime() ?? 0) - (b.due_at?.getTime() ?? 0) ||
  compare(a.event_id, b.event_id) ||
  compare(a._id, b._id);

/** Which endpoints a query asks for: one, all, or all but some (the dispatcher's look). */
type EndpointCondition = string | undefined | { $nin: string[] };
const endpointMatches = (d: Delivery, condition: EndpointCondition) =>
  condition === undefined ||
  (typeof condition === "string" ? d.endpoint_id === condition : !condition.$nin.includes(d.endpoint_id));

async function checkQueries(collection: Collection<Delivery>, model: Map<string, Delivery>): Promise<void> {
  const deliveries = [...model.values()];
  for (let i = 0; i < 40; i++) {
    const endpoint = pick<EndpointCondition>([
      "we_a",
      "we_b",
      "we_c",
      "we_none",
      undefined,
      { $nin: ["we_a"] },
    ]);
    const now = at(Math.floor(Math.random() * 60) * 1000);
    const limit = pick([1, 5, 50, 1000]);
    const expected = deliveries
      .filter((d) => isDue(d, now) && endpointMatches(d, endpoint))
      .sort(byQueueOrder)
      .slice(0, limit);
    const filter =
      endpoint === undefined ? { due_at: { $lte: now } } : { endpoint_id: endpoint, due_at: { $lte: now } };
    const found = await collection
      .find(filter, { sort: { due_at: 1, event_id: 1, _id: 1 }, limit })
      .toArray();
    expect(
      found.map((d) => d._id),
      JSON.stringify({ endpoint, now, limit }),
    ).toEqual(expected.map((d) => d._id));
  }
  // `_id` pinned with more conditions: a value, an `$in` list, ids that do not exist.
  for (let i = 0; i < 40; i++) {
    const ids = Array.from({ length: pick([1, 3, 20]) }, () =>
      Math.random() < 0.8 ? pick(deliveries)._id : "dlv_none",
    );
    const attempts = pick([0, 1, 2, 3]);
    const filter = ids.length === 1 ? { _id: ids[0] as string, attempts } : { _id: { $in: ids }, attempts };
    const expected = deliveries
      .filter((d) => ids.includes(d._id) && d.attempts === attempts)
      .map((d) => d._id)
      .sort();
    const found = await collection.find(filter).toArray();
    expect(found.map((d) => d._id).sort(), JSON.stringify(filter)).toEqual(expected);
  }
}

/** Every kind of write the queue makes (inserts, claims, outcomes, removals), each followed by the check. */
async function exercise(collection: Collection<Delivery>, model: Map<string, Delivery>): Promise<void> {
  const deliveries = Array.from({ length: 300 }, randomDelivery);
  await collection.insertMany(deliveries.slice(0, 200).map((d) => ({ ...d })));
  for (const d of deliveries.slice(200)) await collection.insertOne({ ...d });
  for (const d of deliveries) model.set(d._id, { ...d });
  await checkQueries(collection, model);

  // A claim: the first due deliveries of an endpoint, fenced by their attempts, leased.
  const now = at(30_000);
  const due = [...model.values()]
    .filter((d) => d.endpoint_id === "we_a" && isDue(d, now))
    .sort(byQueueOrder)
    .slice(0, 25);
  const leased = at(99_000);
  const { modifiedCount } = await collection.updateMany(
    {
      _id: { $in: due.map((d) => d._id) },
      due_at: { $lte: now },
      $or: due.map((d) => ({ _id: d._id, attempts: d.attempts })),
    },
    { $set: { due_at: leased }, $inc: { attempts: 1 } },
  );
  expect(modifiedCount).toBe(due.length);
  for (const d of due)
    Object.assign(model.get(d._id) as Delivery, { due_at: leased, attempts: d.attempts + 1 });
  await checkQueries(collection, model);

  // Outcomes (settled: no `due_at`; a retry: later), a fenced outcome that loses, removals.
  await collection.bulkWrite(
    due.slice(0, 10).map((d, i) => {
      const settled = i % 2 === 0;
      const dueAt = settled ? null : at(70_000 + i * 1000);
      Object.assign(model.get(d._id) as Delivery, {
        due_at: dueAt,
        status: settled ? "succeeded" : "pending",
      });
      return {
        updateOne: {
          filter: { _id: d._id, attempts: d.attempts + 1 },
          update: { $set: { due_at: dueAt, status: settled ? "succeeded" : "pending" } },
        },
      };
    }),
  );
  const lost = await collection.updateOne(
    { _id: due[0]?._id as string, attempts: 99 },
    { $set: { due_at: at(1) } },
  );
  expect(lost.matchedCount).toBe(0);
  await collection.deleteMany({ _id: { $in: due.slice(10, 20).map((d) => d._id) } });
  for (const d of due.slice(10, 20)) model.delete(d._id);
  await collection.deleteMany({ endpoint_id: "we_c", status: "succeeded" });
  for (const [id, d] of model) if (d.endpoint_id === "we_c" && d.status === "succeeded") model.delete(id);
  await checkQueries(collection, model);
}

describe("the delivery queue's queries on the embedded database", () => {
  itAnswersAsTheModel<Delivery>(
    "answer as MongoDB does through inserts, claims, outcomes and removals",
    exercise,
    checkQueries,
  );
});
