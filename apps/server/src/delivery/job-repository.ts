import { randomUUID } from "node:crypto";
import { MongoJobRepository } from "@agendajs/mongo-backend";
import { type AgendaBackend, type JobParameters, type JobRepositoryOptions, toJobId } from "agenda";
import { type AnyBulkWriteOperation, type Collection, type Db, type Document, ObjectId } from "mongodb";
import { DELIVERY_JOBS_COLLECTION } from "../db/delivery-jobs.js";
import { gathered } from "./gather.js";

/**
 * Agenda's MongoDB job storage with its per-job round trips shared among jobs (issue 25). Agenda
 * still decides what runs when; this changes how many jobs one database call serves:
 *
 *  - the lock query takes up to `lockBatch` due jobs at once (a find, then one conditional
 *    update of all of them) and hands them to Agenda's processor one call at a time from a local
 *    buffer, instead of one `findOneAndUpdate` per job;
 *  - of the two saves Agenda makes per run only the one after it is written, gathered
 *    (delivery/gather.ts) with those of the jobs finishing at the same moment into one
 *    `bulkWrite`, which also deletes the jobs that will not run again (`saveJobState`).
 *
 * Locks mean the same as Agenda's own: a buffered job is locked (`lockedAt`) like a job waiting
 * in Agenda's queue, expires the same way if this process dies, and is unlocked on a graceful stop
 * (`release`). Every query pins `_id` where it can, which the database (and the embedded
 * fallback, see scripts/mongo-java-server/QueuePlans.java) answers from the `_id` index.
 */
export class BatchedJobRepository extends MongoJobRepository {
  /** Jobs locked by this process and not yet handed to Agenda, in lock order. */
  private buffer: JobParameters[] = [];
  private locking: Promise<void> | undefined;
  /** Tells this process's locks apart from everyone else's when reading back which jobs it took. */
  private readonly owner = randomUUID();
  private batches = 0;

  /**
   * The saves of finished runs. A job that will run again (a retry, a deferral) gets Agenda's
   * state; a job that will not (its delivery settled: Agenda's lock query never picks a job without
   * `nextRunAt` again) is deleted instead, which is what `removeOnComplete` did one round trip later.
   * Each applies only while the job still carries this process's lock mark (`lastModifiedBy`, set
   * by the lock): a worker whose lock expired and was taken over leaves the job to its new owner.
   * A save that matched nothing is not reported: Agenda ignores the errors of this save anyway.
   */
  private readonly finish = gathered(async (jobs: JobParameters[]) => {
    const operations: AnyBulkWriteOperation<Document>[] = jobs.map((job) => {
      const filter = { _id: new ObjectId(String(job._id)), lastModifiedBy: job.lastModifiedBy ?? null };
      return job.nextRunAt
        ? { updateOne: { filter, update: { $set: stateOf(job) } } }
        : { deleteOne: { filter } };
    });
    await this.jobs().bulkWrite(operations, { ordered: false });
    return jobs.map(() => undefined);
  });

  constructor(
    db: Db,
    private readonly lockBatch: number,
  ) {
    // No index creation at connect: db/delivery-jobs.ts makes it with the other indexes.
    super({ mongo: db, db: { collection: DELIVERY_JOBS_COLLECTION }, ensureIndex: false });
  }

  /** Agenda's collection, as the plain documents these queries read and write. */
  private jobs(): Collection<Document> {
    return this.collection as unknown as Collection<Document>;
  }

  override async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    // Agenda's poll and a notification may fill the queue at the same time: one lock batch at a time.
    while (this.locking) await this.locking.catch(() => undefined);
    const buffered = this.take(jobName);
    if (buffered) return buffered;
    this.locking = this.lockBatchOf(jobName, nextScanAt, lockDeadline, now ?? new Date(), options);
    try {
      await this.locking;
    } finally {
      this.locking = undefined;
    }
    return this.take(jobName);
  }

  private take(jobName: string): JobParameters | undefined {
    const at = this.buffer.findIndex((job) => job.name === jobName);
    return at === -1 ? undefined : this.buffer.splice(at, 1)[0];
  }

  /** Locks up to `lockBatch` jobs Agenda's lock query would pick, first ones first, into the buffer. */
  private async lockBatchOf(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    lockedAt: Date,
    options: JobRepositoryOptions | undefined,
  ): Promise<void> {
    // Agenda's lock query (MongoJobRepository.getNextJobToRun): due and unlocked, or locked by a
    // worker that died (its lock is past its lifetime).
    const lockable = {
      name: jobName,
      disabled: { $ne: true },
      $or: [
        { lockedAt: { $eq: null }, nextRunAt: { $lte: nextScanAt } },
        { lockedAt: { $lte: lockDeadline } },
      ],
    };
    const candidates = await this.jobs()
      .find(lockable, { sort: { nextRunAt: 1, priority: -1 }, limit: this.lockBatch })
      .toArray();
    if (candidates.length === 0) return;
    const ids = candidates.map((job) => job._id);
    // The lock mark: which process took the jobs, in which batch (an Agenda name is not unique:
    // every container's process is pid 1).
    const by = `${options?.lastModifiedBy ?? "agenda"} ${this.owner} ${++this.batches}`;
    // The same conditions again: a job another worker locked since the find is left to it.
    const { modifiedCount } = await this.jobs().updateMany(
      { _id: { $in: ids }, ...lockable },
      { $set: { lockedAt, lastModifiedBy: by } },
    );
    let taken = candidates;
    if (modifiedCount < candidates.length) {
      const ours = await this.jobs()
        .find({ _id: { $in: ids } }, { projection: { lastModifiedBy: 1 } })
        .toArray();
      const mine = new Set(ours.filter((job) => job.lastModifiedBy === by).map((job) => String(job._id)));
      taken = candidates.filter((job) => mine.has(String(job._id)));
    }
    for (const job of taken) this.buffer.push(toParameters({ ...job, lockedAt, lastModifiedBy: by }));
  }

  /**
   * Unlocks the jobs this process locked and never handed to Agenda (graceful stop, after Agenda's
   * own stop has unlocked the ones in its queue).
   */
  async release(): Promise<void> {
    while (this.locking) await this.locking.catch(() => undefined);
    const ids = this.buffer.map((job) => String(job._id));
    this.buffer = [];
    await this.unlockJobs(ids);
  }

  /**
   * Agenda saves a job twice per run. The save before the run (the job still locked) is not
   * written: it would only say that the job runs, which its lock says already, and the attempt's
   * claim (db/delivery-jobs.ts `claimAttempts`) refreshes that lock; a worker that dies leaves the
   * job locked either way, for another one to take over when the lock expires. The save after the
   * run (lock released) is gathered with the others (`finish`).
   */
  override async saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    if (!job._id) return super.saveJobState(job, options);
    if (job.lockedAt) return;
    return this.finish(job);
  }
}

/**
 * What Agenda's `saveJobState` writes (MongoJobRepository), as one update of a bulk write. The
 * lock mark stays until the next lock replaces it.
 */
function stateOf(job: JobParameters): Document {
  const date = (value: Date | undefined) => (value ? new Date(value) : null);
  return {
    lockedAt: date(job.lockedAt),
    nextRunAt: date(job.nextRunAt ?? undefined),
    lastRunAt: date(job.lastRunAt),
    progress: job.progress ?? null,
    failReason: job.failReason ?? null,
    failCount: job.failCount ?? null,
    failedAt: date(job.failedAt),
    lastFinishedAt: date(job.lastFinishedAt),
  };
}

/** A job document as Agenda's processor takes it: its id as a string, absent fields undefined. */
function toParameters(doc: Document): JobParameters {
  const fields = Object.fromEntries(Object.entries(doc).map(([key, value]) => [key, value ?? undefined]));
  return { ...fields, _id: toJobId(String(doc._id)) } as JobParameters;
}

/** The Agenda backend of the delivery jobs: the server's own connection, the batched repository. */
export class DeliveryJobsBackend implements AgendaBackend {
  readonly name = "MongoDB, batched";
  readonly ownsConnection = false;
  readonly repository: BatchedJobRepository;

  constructor(db: Db, lockBatch: number) {
    this.repository = new BatchedJobRepository(db, lockBatch);
  }

  connect(): Promise<void> {
    return this.repository.connect();
  }

  disconnect(): Promise<void> {
    return this.repository.disconnect();
  }
}
