import type { ChangeStream, ChangeStreamDocument, Collection, Db } from "mongodb";
import type { Logger } from "../logger.js";

/**
 * The `delivery_bell` collection (issue 25): one counter that every process bumps after it
 * inserted delivery jobs, so that workers in other processes hear of them at once instead of at
 * Agenda's next poll (delivery/wake.ts listens). One small write per batch of jobs, whatever its
 * size, instead of workers watching `agenda_jobs` itself (docs/decisions.md, "Waking workers").
 *
 * Every query here names the document by `_id` and nothing else: the embedded fallback
 * (mongo-java-server) uses an index only for a query that is exactly `{_id}`, and a wake that
 * polls this document every 20 ms must not scan.
 */

export const DELIVERY_BELL_COLLECTION = "delivery_bell";

const BELL_ID = "deliveries";

export interface DeliveryBellDoc {
  _id: string;
  rings: number;
}

/** How long a change stream's getMore waits for a ring on a real replica set before answering empty. */
const STREAM_AWAIT_MS = 500;

export class DeliveryBell {
  readonly collection: Collection<DeliveryBellDoc>;
  /** The ring being written, if any. */
  private ringing: Promise<void> | undefined;
  /** The one ring queued behind it, which covers every ring asked for meanwhile. */
  private queued: Promise<void> | undefined;

  constructor(
    db: Db,
    private readonly logger: Logger,
  ) {
    this.collection = db.collection<DeliveryBellDoc>(DELIVERY_BELL_COLLECTION);
  }

  /**
   * Creates the bell once, so that rings are plain updates: two processes upserting a missing
   * document at the same moment can collide on `_id` (a lost ring), two updating it cannot.
   */
  async ensureDocument(): Promise<void> {
    try {
      await this.collection.updateOne({ _id: BELL_ID }, { $setOnInsert: { rings: 0 } }, { upsert: true });
    } catch (err) {
      // Another process created it between our lookup and our insert.
      if ((err as { code?: unknown }).code !== 11000) throw err;
    }
  }

  /**
   * Rings: adds 1 to the counter. Coalesced: one ring in flight per process, and rings asked for
   * while it is in flight make exactly one more after it, so a burst of writes costs two rings
   * and none is lost (the last ring starts after the last call). Resolves once a ring that
   * started after this call is written or failed; never rejects: a failed ring is logged, and
   * only delays delivery until Agenda's poll.
   */
  ring(): Promise<void> {
    if (!this.ringing) {
      this.ringing = this.write().finally(() => {
        this.ringing = undefined;
      });
      return this.ringing;
    }
    this.queued ??= this.ringing.then(() => {
      this.queued = undefined;
      return this.ring();
    });
    return this.queued;
  }

  /** The counter (0 before the first ring). */
  async rings(): Promise<number> {
    const bell = await this.collection.findOne({ _id: BELL_ID });
    return bell?.rings ?? 0;
  }

  /**
   * A change stream of the rings. It matches on the operation, not on `documentKey._id`: the
   * collection holds the bell alone, and mongo-java-server (with its oplog) reports the update
   * itself as an update's `documentKey`.
   */
  watch(): ChangeStream<DeliveryBellDoc, ChangeStreamDocument<DeliveryBellDoc>> {
    return this.collection.watch([{ $match: { operationType: { $in: ["insert", "update", "replace"] } } }], {
      maxAwaitTimeMS: STREAM_AWAIT_MS,
    });
  }

  private async write(): Promise<void> {
    try {
      await this.collection.updateOne({ _id: BELL_ID }, { $inc: { rings: 1 } }, { upsert: true });
    } catch (err) {
      this.logger.warn({ err }, "delivery bell: ring failed; workers find the jobs at their next poll");
    }
  }
}
