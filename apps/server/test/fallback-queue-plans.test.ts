import { randomBytes } from "node:crypto";
import { type Collection, ObjectId } from "mongodb";
import { describe, expect, it } from "vitest";
import { acrossH2Restart, runDatabase } from "./helpers/database.js";

/**
 * The delivery queue's queries answered exactly as MongoDB answers them, through every kind of
 * write (issue 25). On mongo-java-server, Agenda's lock query walks the jobs in lock order and the
 * queries that pin `_id` read it through the `_id` index (scripts/mongo-java-server/
 * QueuePlans.java); this checks both plans against a model kept here. On MongoDB it checks nothing
 * but MongoDB. The H2 file backend is checked here whatever the run's database.
 */
interface Job {
  _id: ObjectId;
  name: string;
  nextRunAt: Date | null;
  priority: number;
  lockedAt: Date | null;
  disabled?: boolean;
}

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms);
const pick = <T>(values: T[]): T => values[Math.floor(Math.random() * values.length)] as T;
const randomJob = (): Job => ({
  _id: new ObjectId(),
  name: pick(["deliver-webhook", "deliver-webhook", "other"]),
  // Many equal due times and priorities, and jobs that are running (no `nextRunAt`).
  nextRunAt: Math.random() < 0.1 ? null : at(Math.floor(Math.random() * 50) * 1000),
  priority: pick([0, 0, 0, 10, -10]),
  lockedAt: Math.random() < 0.3 ? at(Math.floor(Math.random() * 50) * 1000) : null,
  ...(Math.random() < 0.05 ? { disabled: true } : {}),
});

/** Agenda's lock query (@agendajs/mongo-backend `getNextJobToRun`). */
const lockable = (name: string, nextScanAt: Date, lockDeadline: Date) => ({
  name,
  disabled: { $ne: true },
  $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: nextScanAt } }, { lockedAt: { $lte: lockDeadline } }],
});

function matchesLockable(job: Job, name: string, nextScanAt: Date, lockDeadline: Date): boolean {
  if (job.name !== name || job.disabled === true) return false;
  const due = job.lockedAt === null && job.nextRunAt !== null && job.nextRunAt <= nextScanAt;
  return due || (job.lockedAt !== null && job.lockedAt <= lockDeadline);
}

/** The lock order's key; MongoDB orders ties as it likes, so results are compared by key. */
const sortKey = (job: Job) => `${job.nextRunAt?.getTime() ?? -1}/${-job.priority}`;
const byLockOrder = (a: Job, b: Job) =>
  (a.nextRunAt?.getTime() ?? -1) - (b.nextRunAt?.getTime() ?? -1) || b.priority - a.priority;

async function checkQueries(collection: Collection<Job>, model: Map<string, Job>): Promise<void> {
  const jobs = [...model.values()];
  for (let i = 0; i < 40; i++) {
    const name = pick(["deliver-webhook", "other"]);
    const nextScanAt = at(Math.floor(Math.random() * 60) * 1000);
    const lockDeadline = at(Math.floor(Math.random() * 60) * 1000);
    const limit = pick([1, 5, 50, 1000]);
    const expected = jobs
      .filter((job) => matchesLockable(job, name, nextScanAt, lockDeadline))
      .sort(byLockOrder)
      .slice(0, limit);
    const found = await collection
      .find(lockable(name, nextScanAt, lockDeadline), { sort: { nextRunAt: 1, priority: -1 }, limit })
      .toArray();
    const what = JSON.stringify({ name, nextScanAt, lockDeadline, limit });
    expect(found.map(sortKey), what).toEqual(expected.map(sortKey));
    for (const job of found) expect(matchesLockable(job, name, nextScanAt, lockDeadline), what).toBe(true);
  }
  // `_id` pinned with more conditions: a value, an `$in` list, ids that do not exist.
  for (let i = 0; i < 40; i++) {
    const ids = Array.from({ length: pick([1, 3, 20]) }, () =>
      Math.random() < 0.8 ? pick(jobs)._id : new ObjectId(),
    );
    const lockedAt = pick(jobs).lockedAt;
    const filter = ids.length === 1 ? { _id: ids[0], lockedAt } : { _id: { $in: ids }, lockedAt };
    const expected = jobs
      .filter(
        (job) => ids.some((id) => id.equals(job._id)) && job.lockedAt?.getTime() === lockedAt?.getTime(),
      )
      .map((job) => String(job._id))
      .sort();
    const found = await collection.find(filter).toArray();
    expect(found.map((job) => String(job._id)).sort(), JSON.stringify(filter)).toEqual(expected);
  }
}

/** Every kind of write the queue makes (locks, saves, claims, removals), each followed by the check. */
async function exercise(collection: Collection<Job>, model: Map<string, Job>): Promise<void> {
  const jobs = Array.from({ length: 300 }, randomJob);
  await collection.insertMany(jobs.slice(0, 200));
  for (const job of jobs.slice(200)) await collection.insertOne(job);
  for (const job of jobs) model.set(String(job._id), { ...job });
  await checkQueries(collection, model);

  // A lock batch: the first due jobs locked by a pinned conditional update.
  const nextScanAt = at(30_000);
  const due = [...model.values()]
    .filter((job) => matchesLockable(job, "deliver-webhook", nextScanAt, at(-1)))
    .sort(byLockOrder)
    .slice(0, 25);
  const lockedAt = at(99_000);
  const { modifiedCount } = await collection.updateMany(
    { _id: { $in: due.map((job) => job._id) }, ...lockable("deliver-webhook", nextScanAt, at(-1)) },
    { $set: { lockedAt } },
  );
  expect(modifiedCount).toBe(due.length);
  for (const job of due) (model.get(String(job._id)) as Job).lockedAt = lockedAt;
  await checkQueries(collection, model);

  // Saves (a run starts: no `nextRunAt`; a retry: later), a fenced claim that loses, removals.
  for (const job of due.slice(0, 10)) {
    const nextRunAt = Math.random() < 0.5 ? null : at(70_000 + Math.floor(Math.random() * 5) * 1000);
    await collection.updateOne({ _id: job._id, name: job.name }, { $set: { nextRunAt } });
    (model.get(String(job._id)) as Job).nextRunAt = nextRunAt;
  }
  const lost = await collection.findOneAndUpdate(
    { _id: due[0]?._id, lockedAt: at(1) },
    { $set: { lockedAt: at(2) } },
  );
  expect(lost).toBeNull();
  await collection.deleteMany({ _id: { $in: due.slice(10, 20).map((job) => job._id) } });
  for (const job of due.slice(10, 20)) model.delete(String(job._id));
  await collection.deleteMany({ name: "other", priority: 10 });
  for (const [id, job] of model) if (job.name === "other" && job.priority === 10) model.delete(id);
  await checkQueries(collection, model);
}

const db = runDatabase();

describe("the delivery queue's queries on the embedded database", () => {
  it("answer as MongoDB does through locks, saves, claims and removals", async () => {
    const collection = (await db()).collection<Job>(`queue_plans_${randomBytes(4).toString("hex")}`);
    try {
      await exercise(collection, new Map());
    } finally {
      await collection.drop();
    }
  });

  it("answer so on mongo-java-server's H2 file too, and after it reopens the file", async () => {
    const model = new Map<string, Job>();
    await acrossH2Restart<Job>(
      (collection) => exercise(collection, model),
      (collection) => checkQueries(collection, model),
    );
  }, 120_000);
});
