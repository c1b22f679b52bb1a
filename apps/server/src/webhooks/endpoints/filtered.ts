import type { Collection, Db } from "mongodb";
import { deleteInBatches } from "../../platform/database/batch-delete.js";
import { insertManyOnce } from "../../platform/database/insert-once.js";

/**
 * The events endpoints' content filters kept from them (webhooks/endpoints/filter.ts): what
 * `getWebhookEndpointStats` counts as `filtered`, per hour of the fan-out. No delivery is recorded
 * for a filtered event, so this small record (which endpoint, which event, when) is its only
 * trace. Its id is the pair's, like an event's delivery, so a fan-out run again (a relay racing
 * its sweep, or after a crash) counts nothing twice. Kept two days: the stats' window is one.
 */

interface FilteredDoc {
  /** `<event id>:<endpoint id>`. */
  _id: string;
  endpoint_id: string;
  /** When the fan-out kept it out. */
  at: Date;
}

const HOUR_MS = 3_600_000;
const KEEP_MS = 48 * HOUR_MS;

export class FilteredCounts {
  private readonly collection: Collection<FilteredDoc>;

  constructor(db: Db) {
    this.collection = db.collection<FilteredDoc>("webhook_filtered");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { endpoint_id: 1, at: 1 }, name: "endpoint_at" },
      { key: { at: 1 }, name: "at" },
    ]);
  }

  /** Records that these endpoints' filters kept these events from them, at `at`; a pair once. */
  async add(kept: readonly { endpointId: string; eventId: string }[], at: Date): Promise<void> {
    if (kept.length === 0) return;
    await insertManyOnce(
      this.collection,
      kept.map(({ endpointId, eventId }) => ({
        _id: `${eventId}:${endpointId}`,
        endpoint_id: endpointId,
        at,
      })),
    );
  }

  /** The endpoint's filtered events from `since` until `until`, counted by hour start (epoch ms). */
  async between(endpointId: string, since: Date, until: Date): Promise<Map<number, number>> {
    const docs = await this.collection
      .find({ endpoint_id: endpointId, at: { $gte: since, $lt: until } }, { projection: { _id: 0, at: 1 } })
      .toArray();
    const counts = new Map<number, number>();
    for (const { at } of docs) {
      const hour = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
      counts.set(hour, (counts.get(hour) ?? 0) + 1);
    }
    return counts;
  }

  /** Removes what no stats window reads any more, in batches; returns how many went. */
  sweep(now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, { at: { $lt: new Date(now.getTime() - KEEP_MS) } });
  }
}
