import type { Collection, Db } from "mongodb";
import type { EventType } from "../../events/model.js";
import { deleteInBatches } from "../../platform/database/batch-delete.js";
import { insertManyOnce } from "../../platform/database/insert-once.js";
import { newestFirst, type Page } from "../../platform/database/lists.js";
import { newId } from "../../platform/ids.js";
import type { Schema } from "../../spec/types.js";

/**
 * The `delivery_attempts` collection: one document per HTTP attempt to deliver
 * one event to one endpoint, listed newest first by the public and the admin API so developers see
 * why their endpoint fails, and kept ATTEMPT_RETENTION_DAYS (at most as long as deliveries).
 */

export interface DeliveryAttemptDoc {
  _id: string;
  workspace_id: string;
  /** The delivery the attempt belongs to. */
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  /** 1 for the first attempt, up to 1 + the number of retries. */
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  succeeded: boolean;
  /**
   * What the receiver answered (webhooks/delivery/answer.ts: a few headers, the first KiB of the
   * body), null when it did not; absent from attempts recorded before answers were kept. Swept
   * with the attempt.
   */
  response?: Schema<"DeliveryAttemptResponse"> | null;
  /** When the attempt started. */
  created_at: Date;
}

/** Events whose attempts one update scrubs: bounds the `$in` of one query. */
const ERASE_BATCH = 500;

export type DeliveryAttemptInput = Omit<DeliveryAttemptDoc, "_id">;

/**
 * The error of an attempt whose worker stopped (died, or paused past its lease) before recording
 * its outcome: written by the worker that takes the delivery over, and replaced by the real
 * attempt should its worker still record it.
 */
export const INTERRUPTED_ATTEMPT = "interrupted: the worker stopped before the outcome was recorded";

export function toDeliveryAttempt(doc: DeliveryAttemptDoc): Schema<"DeliveryAttempt"> {
  return {
    id: doc._id,
    object: "delivery_attempt",
    delivery_id: doc.delivery_id,
    endpoint_id: doc.endpoint_id,
    event_id: doc.event_id,
    event_type: doc.event_type,
    attempt: doc.attempt,
    status_code: doc.status_code,
    duration_ms: doc.duration_ms,
    error: doc.error,
    succeeded: doc.succeeded,
    response: doc.response ?? null,
    created_at: doc.created_at.toISOString(),
  };
}

export class DeliveryAttempts {
  readonly collection: Collection<DeliveryAttemptDoc>;

  constructor(db: Db) {
    this.collection = db.collection<DeliveryAttemptDoc>("delivery_attempts");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, endpoint_id: 1, _id: -1 }, name: "endpoint_newest" },
      // One record per attempt number of a delivery: the database refuses a second one, whatever
      // two workers believe (the lease of a claimed batch, webhooks/delivery/lane.ts, already keeps
      // them apart). Per delivery, not per event and endpoint, so a resend's or a recovery's attempts
      // are logged beside the first delivery's; the workspace first, so a sharded cluster can keep it.
      {
        key: { workspace_id: 1, delivery_id: 1, attempt: 1 },
        name: "one_per_delivery_attempt",
        unique: true,
      },
      { key: { created_at: 1 }, name: "retention_sweep" },
    ]);
  }

  /**
   * Stores attempts in one round trip (a lane's concurrent deliveries); an attempt number of a
   * delivery stored already stays as it is, unless it is a take-over's placeholder
   * (INTERRUPTED_ATTEMPT) and this is the real attempt, which replaces it.
   */
  async insertOnce(inputs: DeliveryAttemptInput[]): Promise<void> {
    const docs = inputs.map((input) => ({ _id: newId("att", input.created_at.getTime()), ...input }));
    const inserted = await insertManyOnce(this.collection, docs);
    const real = inputs.filter((input, i) => !inserted[i] && input.error !== INTERRUPTED_ATTEMPT);
    if (real.length === 0) return;
    await this.collection.bulkWrite(
      real.map(({ workspace_id, delivery_id, attempt, ...known }) => ({
        updateOne: {
          filter: { workspace_id, delivery_id, attempt, error: INTERRUPTED_ATTEMPT },
          update: { $set: known },
        },
      })),
      { ordered: false },
    );
  }

  /**
   * A page of one endpoint's attempts, newest first, one more than asked for `has_more`; of one
   * of its deliveries only, given `deliveryId` (the `one_per_delivery_attempt` index finds its
   * few attempts).
   */
  list(
    endpoint: { _id: string; workspace_id: string },
    page: Page,
    deliveryId?: string,
  ): Promise<DeliveryAttemptDoc[]> {
    const filter: Record<string, unknown> = { endpoint_id: endpoint._id };
    if (deliveryId !== undefined) filter.delivery_id = deliveryId;
    return newestFirst(this.collection, endpoint.workspace_id, filter, page);
  }

  /**
   * Empties the receivers' answers kept with the workspace's attempts of these events (an erased
   * contact's: a receiver may echo what it was sent), keeping their headers and marking them
   * `erased` (docs/decisions.md, "Erasure"). Answers how many changed; a repeat changes none.
   */
  async eraseAnswers(workspaceId: string, eventIds: readonly string[]): Promise<number> {
    let erased = 0;
    for (let at = 0; at < eventIds.length; at += ERASE_BATCH) {
      const { modifiedCount } = await this.collection.updateMany(
        {
          workspace_id: workspaceId,
          event_id: { $in: eventIds.slice(at, at + ERASE_BATCH) },
          "response.body": { $exists: true },
          "response.erased": { $exists: false },
        },
        { $set: { "response.body": "", "response.body_truncated": false, "response.erased": true } },
      );
      erased += modifiedCount;
    }
    return erased;
  }

  /** Removes attempts (and their stored answers) older than `retentionMs`, in batches; returns how many went. */
  sweep(retentionMs: number, now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, { created_at: { $lt: new Date(now.getTime() - retentionMs) } });
  }
}
