import { createHash, randomUUID } from "node:crypto";
import { type Db, ObjectId } from "mongodb";
import type { EventType } from "../domain/events.js";
import { insertManyOnce } from "./insert-once.js";

/**
 * The collection Agenda keeps the delivery jobs in (delivery/agenda.ts). Agenda runs them; this
 * module names the collection, makes the index Agenda's lock query needs (with the other indexes;
 * Agenda's own index creation is off, see delivery/agenda.ts), and writes new jobs itself, in
 * batches, as Agenda's `job.save()` would: queueing a recovery of 10,000 events is then a few
 * `insertMany`s instead of 10,000 upserts, and the API needs no Agenda instance to queue.
 */
export const DELIVERY_JOBS_COLLECTION = "agenda_jobs";

/** The Agenda job name of a delivery attempt. */
export const DELIVERY_JOB = "deliver-webhook";

/** What a delivery job carries; `attempt` counts the attempts claimed so far. */
export interface DeliveryJobData {
  /** The delivery (db/webhook-deliveries.ts) this job makes; absent on jobs made before deliveries were recorded. */
  delivery_id?: string;
  event_id: string;
  endpoint_id: string;
  workspace_id: string;
  attempt: number;
  /**
   * The event's type and stored JSON, copied when the job is made, so an attempt reads no event
   * (the lock query already returns the job). Events never change; jobs made before these fields
   * existed have neither and read the event.
   */
  event_type?: EventType;
  payload?: string;
  /**
   * Jobs made before deliveries were recorded, by a relay that ran again: the first attempt checks
   * the attempts log before it sends. (Jobs with a `delivery_id` check their delivery instead.)
   */
  recheck?: boolean;
}

/**
 * The job's `_id`, derived from its delivery: inserting the job twice (a sweep and the request
 * that queued the delivery, or a retried relay) is refused by `_id`, which the database keeps
 * unique on every deployment, also the embedded fallback.
 */
export function deliveryJobId(deliveryId: string): ObjectId {
  return new ObjectId(createHash("sha256").update(deliveryId).digest().subarray(0, 12));
}

/** A job to insert: its delivery's data and when it is due (the lock query runs due jobs oldest `nextRunAt` first). */
export interface NewDeliveryJob {
  data: DeliveryJobData & { delivery_id: string };
  nextRunAt: Date;
}

/** The document Agenda's `create(DELIVERY_JOB, data).save()` writes (MongoJobRepository.saveJob). */
function jobDocument(job: NewDeliveryJob) {
  return {
    _id: deliveryJobId(job.data.delivery_id),
    name: DELIVERY_JOB,
    data: job.data,
    type: "normal",
    priority: 0,
    nextRunAt: job.nextRunAt,
    lockedAt: null,
    lastFinishedAt: null,
    failedAt: null,
    failCount: null,
    failReason: null,
    repeatTimezone: null,
    lastRunAt: null,
    repeatInterval: null,
    repeatAt: null,
    disabled: null,
    progress: null,
    debounceStartedAt: null,
    fork: null,
    startDate: null,
    endDate: null,
    skipDays: null,
    lastModifiedBy: null,
  };
}

/**
 * Inserts the jobs in one round trip; a job whose `_id` exists is left as it is (its delivery
 * was queued already). Returns, per job, whether it existed.
 */
export function insertDeliveryJobs(db: Db, jobs: NewDeliveryJob[]): Promise<boolean[]> {
  if (jobs.length === 0) return Promise.resolve([]);
  return insertManyOnce(db.collection(DELIVERY_JOBS_COLLECTION), jobs.map(jobDocument));
}

/** A job whose worker is about to attempt its delivery: its id and the lock the worker holds. */
export interface AttemptClaim {
  id: string;
  lockedAt: Date;
}

/**
 * Claims the next attempt number of each job, fenced by the lock its worker took: a job's claim
 * applies only while its `lockedAt` is still the one the worker holds, so when a lock expired and
 * another worker took the job over, at most one of the two gets each attempt number. Refreshes the
 * locks, so their lifetime counts from the attempts' start. Jobs locked together share their
 * `lockedAt` (delivery/job-repository.ts), so a batch costs one update per lock it holds and one
 * read: what each claim got, the new number or null (lost, or the job is gone), and the new lock.
 */
export async function claimAttempts(
  db: Db,
  claims: AttemptClaim[],
): Promise<Array<{ attempt: number; lockedAt: Date } | null>> {
  const jobs = db.collection<{
    _id: ObjectId;
    lockedAt: Date | null;
    lastModifiedBy?: string;
    data: DeliveryJobData;
  }>(DELIVERY_JOBS_COLLECTION);
  const lockedAt = new Date();
  const by = `claim ${randomUUID()}`;
  const byLock = new Map<number, AttemptClaim[]>();
  for (const claim of claims) {
    const group = byLock.get(claim.lockedAt.getTime());
    if (group) group.push(claim);
    else byLock.set(claim.lockedAt.getTime(), [claim]);
  }
  await Promise.all(
    [...byLock.values()].map((group) =>
      jobs.updateMany(
        { _id: { $in: group.map((claim) => new ObjectId(claim.id)) }, lockedAt: group[0]?.lockedAt ?? null },
        { $inc: { "data.attempt": 1 }, $set: { lockedAt, lastModifiedBy: by } },
      ),
    ),
  );
  const found = await jobs
    .find(
      { _id: { $in: claims.map((claim) => new ObjectId(claim.id)) } },
      { projection: { lastModifiedBy: 1, "data.attempt": 1 } },
    )
    .toArray();
  const claimed = new Map(
    found.filter((job) => job.lastModifiedBy === by).map((job) => [String(job._id), job]),
  );
  return claims.map((claim) => {
    const job = claimed.get(claim.id);
    return job ? { attempt: job.data.attempt, lockedAt } : null;
  });
}

export async function ensureDeliveryJobIndexes(db: Db): Promise<void> {
  await db
    .collection(DELIVERY_JOBS_COLLECTION)
    .createIndex(
      { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 },
      { name: "findAndLockNextJobIndex" },
    );
}
