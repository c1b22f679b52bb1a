import type { Collection, Db } from "mongodb";

/**
 * The `delivery_queue_intents` collection (issue 22): one document per batch of deliveries a
 * resend or a recovery is queueing, written before the deliveries and removed once their jobs
 * exist (delivery/queue.ts). A process that dies in between leaves it; the sweep finds it and
 * makes the missing jobs. Two single-document writes per batch of 1,000: cheaper than marking
 * each delivery (an `updateMany` over the batch), and the collection is empty but for crashes.
 */

export interface QueueIntentDoc {
  _id: string;
  delivery_ids: string[];
  created_at: Date;
}

export class QueueIntents {
  readonly collection: Collection<QueueIntentDoc>;

  constructor(db: Db) {
    this.collection = db.collection<QueueIntentDoc>("delivery_queue_intents");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ created_at: 1 }, { name: "sweep" });
  }

  async record(intent: QueueIntentDoc): Promise<void> {
    await this.collection.insertOne(intent);
  }

  async done(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id });
  }

  /** Intents older than `before`: their process died before finishing them (or is very slow). */
  stale(before: Date, limit: number): Promise<QueueIntentDoc[]> {
    return this.collection
      .find({ created_at: { $lt: before } })
      .sort({ created_at: 1 })
      .limit(limit)
      .toArray();
  }
}
