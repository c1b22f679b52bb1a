import type { Collection, Db } from "mongodb";
import type { Events } from "../../events/events.js";
import { deleteInBatches } from "../../platform/database/batch-delete.js";
import { isDuplicateKey } from "../../platform/database/errors.js";
import { DomainError, notFound } from "../../platform/errors.js";
import { idTime, newId } from "../../platform/ids.js";
import type { Schema } from "../../spec/types.js";
import type { DeliveryQueue } from "../deliveries/queue.js";
import type { WebhookDeliveries } from "../deliveries/store.js";
import type { WebhookEndpoints } from "../endpoints/store.js";

/**
 * The `webhook_recoveries` collection: one document per `recoverWebhookEndpoint` call, which the
 * recovery job (webhooks/recovery/job.ts) pages through the window with, a page at a time. The
 * document is the job's whole state (where it is, what it has counted), so a worker that dies
 * mid-way leaves it where the next one goes on (docs/decisions.md "Recoveries run as jobs").
 * A finished one is kept RECOVERY_RETENTION_DAYS after it finished, then swept.
 */

export type RecoveryStatus = Schema<"WebhookRecoveryStatus">;

export interface WebhookRecoveryDoc {
  _id: string;
  workspace_id: string;
  endpoint_id: string;
  since: Date;
  until: Date;
  status: RecoveryStatus;
  /** Events of the window read so far. */
  scanned: number;
  /** Deliveries queued so far. */
  queued: number;
  /** The id of the last event looked at: a resumed run goes on after it. */
  cursor: string | null;
  /** The last due time given (ms): due times keep increasing across pages and runs. */
  last_due: number;
  /**
   * While queued or running: `<endpoint>:<slot>`, unique (sparse), one of
   * WEBHOOK_RECOVERIES_PER_ENDPOINT slots; removed when it ends. The database, not a count read
   * first, keeps two racing starts from both taking the last slot.
   */
  slot?: string;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Where a page left the recovery. */
export interface RecoveryProgress {
  cursor: string;
  scanned: number;
  queued: number;
  lastDue: number;
}

/** Makes sure a worker runs the recovery (webhooks/recovery/job.ts schedules its Agenda job). */
export type RecoveryScheduler = (recoveryId: string) => Promise<void>;

/** A recovery as the API shows it, with its deliveries counted by status now (`countForRecovery`). */
export function toWebhookRecovery(
  doc: WebhookRecoveryDoc,
  deliveries: Schema<"DeliveryCounts">,
): Schema<"WebhookRecovery"> {
  return {
    id: doc._id,
    object: "webhook_recovery",
    endpoint_id: doc.endpoint_id,
    since: doc.since.toISOString(),
    until: doc.until.toISOString(),
    status: doc.status,
    scanned: doc.scanned,
    scanned_until: scannedUntil(doc),
    queued: doc.queued,
    deliveries,
    completed_at: doc.completed_at?.toISOString() ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

export interface RecoveryOptions {
  /** WEBHOOK_RECOVERIES_PER_ENDPOINT (docs/operations.md "Limits"). */
  perEndpoint?: number;
  /** WEBHOOK_RECOVERY_PAGE_SIZE: events read, checked and queued per round trip. */
  pageSize?: number;
  /** WEBHOOK_RECOVERY_LOCK_MS: after this long without a page, another worker takes the recovery over. */
  lockMs?: number;
}

/** How far through the window the job is: the time of the last event looked at. */
function scannedUntil(doc: WebhookRecoveryDoc): string | null {
  if (doc.status === "succeeded") return doc.until.toISOString();
  return doc.cursor ? new Date(Math.min(idTime(doc.cursor), doc.until.getTime())).toISOString() : null;
}

/** The stores resend and recovery work with: the events, where they go and how they are queued. */
export interface RecoveryStores {
  webhookEndpoints: WebhookEndpoints;
  webhookDeliveries: WebhookDeliveries;
  deliveryQueue: DeliveryQueue;
  webhookRecoveries: WebhookRecoveries;
  events: Events;
}

export class WebhookRecoveries {
  readonly collection: Collection<WebhookRecoveryDoc>;
  private scheduler: RecoveryScheduler | undefined;

  private readonly perEndpoint: number;
  /** How the job runs: events per page, and how long a silent worker keeps it (webhooks/recovery/job.ts). */
  readonly job: { pageSize: number; lockMs: number };

  constructor(db: Db, options: RecoveryOptions = {}) {
    this.perEndpoint = options.perEndpoint ?? 1;
    this.job = { pageSize: options.pageSize ?? 1000, lockMs: options.lockMs ?? 30_000 };
    this.collection = db.collection<WebhookRecoveryDoc>("webhook_recoveries");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { slot: 1 }, name: "one_per_slot", unique: true, sparse: true },
      // Only finished recoveries have a `completed_at` to compare, so the sweep never meets a running one.
      { key: { completed_at: 1 }, name: "retention_sweep" },
    ]);
  }

  /**
   * Given the job's scheduler as delivery is composed, which the server does before it serves
   * (server.ts): no recovery is started before.
   */
  attachScheduler(schedule: RecoveryScheduler): void {
    this.scheduler = schedule;
  }

  /**
   * Records a recovery, `queued`, in a free slot of its endpoint, and has a worker run it.
   * Refuses (409 webhook_recovery_in_progress) when every slot is taken.
   */
  async start(
    endpoint: { _id: string; workspace_id: string },
    window: { since: Date; until: Date },
  ): Promise<WebhookRecoveryDoc> {
    const now = new Date();
    const base = {
      _id: newId("rcv", now.getTime()),
      workspace_id: endpoint.workspace_id,
      endpoint_id: endpoint._id,
      since: window.since,
      until: window.until,
      status: "queued" as const,
      scanned: 0,
      queued: 0,
      cursor: null,
      last_due: 0,
      completed_at: null,
      created_at: now,
      updated_at: now,
    };
    const { scheduler } = this;
    if (!scheduler) throw new Error("a recovery was started before delivery was composed (server.ts)");
    const doc = await this.insertInFreeSlot(base);
    await scheduler(doc._id);
    return doc;
  }

  private async insertInFreeSlot(base: Omit<WebhookRecoveryDoc, "slot">): Promise<WebhookRecoveryDoc> {
    for (let slot = 0; slot < this.perEndpoint; slot++) {
      const doc: WebhookRecoveryDoc = { ...base, slot: `${base.endpoint_id}:${slot}` };
      try {
        await this.collection.insertOne(doc);
        return doc;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // A retried request (its ids replayed) finds the recovery it made.
        const made = await this.collection.findOne({ _id: base._id });
        if (made) return made;
      }
    }
    const running = await this.collection.findOne(
      { endpoint_id: base.endpoint_id, slot: { $exists: true } },
      { projection: { _id: 1 } },
    );
    throw new DomainError(
      "conflict",
      "webhook_recovery_in_progress",
      `Recovery ${running?._id ?? "of this endpoint"} is still under way, and an endpoint may have ` +
        `${this.perEndpoint} at once (WEBHOOK_RECOVERIES_PER_ENDPOINT); follow it with getWebhookRecovery, ` +
        "then recover again if needed.",
      { param: "id" },
    );
  }

  async get(workspaceId: string, id: string): Promise<WebhookRecoveryDoc> {
    const doc = await this.collection.findOne({ _id: id, workspace_id: workspaceId });
    if (!doc) throw notFound("webhook recovery", id);
    return doc;
  }

  find(id: string): Promise<WebhookRecoveryDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** A worker took it up (again). */
  async running(id: string): Promise<void> {
    await this.collection.updateOne(
      { _id: id, status: { $ne: "succeeded" } },
      { $set: { status: "running", updated_at: new Date() } },
    );
  }

  /** A page is done: where it ended and what it counted. */
  async progressed(id: string, progress: RecoveryProgress): Promise<void> {
    await this.collection.updateOne(
      { _id: id },
      {
        $set: {
          cursor: progress.cursor,
          scanned: progress.scanned,
          queued: progress.queued,
          last_due: progress.lastDue,
          updated_at: new Date(),
        },
      },
    );
  }

  /** Removes recoveries finished more than `retentionMs` ago, in batches; returns how many went. */
  sweep(retentionMs: number, now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, {
      status: "succeeded",
      completed_at: { $lt: new Date(now.getTime() - retentionMs) },
    });
  }

  /** Every event of the window was looked at: done, and its slot free for the next. */
  async succeeded(id: string): Promise<void> {
    const now = new Date();
    await this.collection.updateOne(
      { _id: id },
      { $set: { status: "succeeded", completed_at: now, updated_at: now }, $unset: { slot: "" } },
    );
  }
}
