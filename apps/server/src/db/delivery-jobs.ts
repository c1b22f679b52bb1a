import { createHash } from "node:crypto";
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

/** A job whose worker is about to attempt its delivery. */
export interface AttemptClaim {
  id: string;
  /** The lock the worker holds: its time and its mark (`lastModifiedBy`, delivery/job-repository.ts). */
  lockedAt: Date;
  owner: string;
  /** The attempts the job had counted when the worker locked it. */
  attempt: number;
}

/**
 * Claims the next attempt number of each job, fenced by the lock its worker took: a job's claim
 * applies only while its `lockedAt` is still the one the worker holds and it has counted the
 * attempts the worker read, so when a lock expired and another worker took the job over, at most
 * one of the two gets each attempt number. Refreshes the locks, so their lifetime counts from the
 * attempts' start; the lock's mark stays. Jobs locked together share their `lockedAt`
 * (delivery/job-repository.ts) and mostly their count, so a batch is usually one update: when it
 * matched every job, each got the number after its count; otherwise one read tells which did (the
 * mark is still the worker's and the lock is the one this claim set). Returns, per claim, the
 * number and the new lock, or null (lost, or the job is gone).
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
  const groups = new Map<string, AttemptClaim[]>();
  for (const claim of claims) {
    const key = `${claim.lockedAt.getTime()} ${claim.attempt}`;
    const group = groups.get(key);
    if (group) group.push(claim);
    else groups.set(key, [claim]);
  }
  const outcomes = new Map<string, { attempt: number; lockedAt: Date } | null>();
  const unsure: AttemptClaim[] = [];
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const [{ lockedAt: held, attempt } = { lockedAt: null, attempt: 0 }] = group;
      const { matchedCount } = await jobs.updateMany(
        {
          _id: { $in: group.map((claim) => new ObjectId(claim.id)) },
          lockedAt: held,
          "data.attempt": attempt,
        },
        { $inc: { "data.attempt": 1 }, $set: { lockedAt } },
      );
      if (matchedCount === group.length) {
        for (const claim of group) outcomes.set(claim.id, { attempt: attempt + 1, lockedAt });
      } else {
        unsure.push(...group);
      }
    }),
  );
  if (unsure.length > 0) {
    const found = await jobs
      .find(
        { _id: { $in: unsure.map((claim) => new ObjectId(claim.id)) } },
        { projection: { lastModifiedBy: 1, lockedAt: 1, "data.attempt": 1 } },
      )
      .toArray();
    const byId = new Map(found.map((job) => [String(job._id), job]));
    for (const claim of unsure) {
      const job = byId.get(claim.id);
      const mine = job?.lastModifiedBy === claim.owner && job.lockedAt?.getTime() === lockedAt.getTime();
      outcomes.set(claim.id, job && mine ? { attempt: job.data.attempt, lockedAt } : null);
    }
  }
  return claims.map((claim) => outcomes.get(claim.id) ?? null);
}

export async function ensureDeliveryJobIndexes(db: Db): Promise<void> {
  await db
    .collection(DELIVERY_JOBS_COLLECTION)
    .createIndex(
      { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 },
      { name: "findAndLockNextJobIndex" },
    );
}
