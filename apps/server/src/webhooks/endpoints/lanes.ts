import type { AnyBulkWriteOperation, Collection } from "mongodb";
import { gathered } from "../../platform/database/gather.js";
import { LeaseFields } from "../../platform/database/lease.js";
import type { WebhookEndpointDoc } from "./document.js";

/**
 * Who runs an endpoint's lane, fleet-wide (docs/decisions.md, "One schedule: the delivery
 * records"): a lease kept on the endpoint's own document, `lane_holder` and `lane_until`. A worker
 * takes the lanes of many endpoints in one update, and only those nobody holds; so one lane runs
 * at a time across every process, and `WEBHOOK_ENDPOINT_CONCURRENCY` (what one run has in flight)
 * bounds the whole deployment's attempts to the endpoint. A worker that dies lets go when its
 * lease runs out. Letting go sets `lane_until` to the earliest next start, which is how a rate
 * limit or a receiver's `Retry-After` holds across workers; a `Retry-After` is written as it
 * arrives (`hold`), so it holds through its worker's crash too. Times are the database's
 * (platform/database/database-clock.ts), whichever process writes them; the lease is the one
 * primitive of platform/database/lease.ts.
 *
 * The lease is state of the endpoint: it goes when the endpoint is deleted, and an endpoint that
 * has no due deliveries is never read. The lease is never in the API. The endpoints' store builds
 * this over its own collection (`webhookEndpoints.lanes`), so these two fields are the only ones
 * written from here; the worker's side of a lease (is there still room to send?) is
 * `HeldLease`, beside the primitive.
 */

const LANE = new LeaseFields("lane_holder", "lane_until");

export interface TakenLanes {
  /** The endpoints whose lanes this worker now holds, as read with the lease. */
  taken: WebhookEndpointDoc[];
  /** Held by another worker or resting, and when to look again (epoch ms, the database's time). */
  busy: Map<string, number>;
  /** Deleted, disabled or paused: their due deliveries are to be dropped. */
  gone: string[];
}

export class LaneLeases {
  /** Lanes let go at about the same time go to the database in one bulk write. */
  private readonly releaseGathered: (release: { id: string; holder: string; until: Date }) => Promise<void>;

  constructor(private readonly endpoints: Collection<WebhookEndpointDoc>) {
    this.releaseGathered = gathered(async (releases) => {
      const operations: AnyBulkWriteOperation<WebhookEndpointDoc>[] = releases.map(
        ({ id, holder, until }) => ({
          updateOne: {
            filter: { _id: id, ...LANE.heldBy(holder) },
            update: { $set: LANE.released(until) },
          },
        }),
      );
      await this.endpoints.bulkWrite(operations, { ordered: false });
      return releases.map(() => undefined);
    });
  }

  /**
   * Takes the lanes of `ids` that nobody holds and that may start at `now`, for `leaseMs`: one
   * update for them all, then one read that says which are ours and returns them. A lane another
   * worker holds is to be looked at again after `recheckMs` at most, whatever its lease says: its
   * holder may let it go at any time (at the end of a run, at SIGTERM), and the next worker then
   * starts within this (WEBHOOK_HELD_RECHECK_MS; docs/webhooks.md, "What delivery guarantees,
   * and under which faults").
   */
  async take(
    ids: string[],
    { holder, leaseMs, recheckMs }: { holder: string; leaseMs: number; recheckMs: number },
    now: Date,
  ): Promise<TakenLanes> {
    if (ids.length === 0) return { taken: [], busy: new Map(), gone: [] };
    await this.endpoints.updateMany(
      { _id: { $in: ids }, status: "enabled", ...LANE.free(now) },
      { $set: LANE.take(holder, now, leaseMs) },
    );
    const read = await this.endpoints.find({ _id: { $in: ids } }).toArray();
    const lanes: TakenLanes = { taken: [], busy: new Map(), gone: [] };
    const found = new Set<string>();
    for (const endpoint of read) {
      found.add(endpoint._id);
      if (endpoint.status !== "enabled") lanes.gone.push(endpoint._id);
      else if (endpoint.lane_holder === holder) lanes.taken.push(endpoint);
      else lanes.busy.set(endpoint._id, lookAgainAt(endpoint, now.getTime(), recheckMs));
    }
    for (const id of ids) if (!found.has(id)) lanes.gone.push(id);
    return lanes;
  }

  /**
   * Extends a held lease and reads the endpoint as it is now (a disable, an edit or a rotation
   * applies to the next batch); null when the lease is no longer this worker's, or the endpoint
   * is gone.
   */
  renew(id: string, holder: string, leaseMs: number, now: Date): Promise<WebhookEndpointDoc | null> {
    return this.endpoints.findOneAndUpdate(
      { _id: id, ...LANE.heldBy(holder) },
      // `$max`: a `Retry-After` held further out stays.
      { $max: LANE.extend(now, leaseMs) },
      { returnDocument: "after" },
    );
  }

  /**
   * No lane of the endpoint starts before `until` (a receiver's `Retry-After`), held now rather
   * than at the release, so that it outlives this worker.
   */
  async hold(id: string, holder: string, until: Date): Promise<void> {
    await this.endpoints.updateOne({ _id: id, ...LANE.heldBy(holder) }, { $max: LANE.until(until) });
  }

  /** Lets the lane go; no lane of the endpoint starts before `until`. */
  release(id: string, holder: string, until: Date): Promise<void> {
    return this.releaseGathered({ id, holder, until });
  }
}

/** When a round looks at a busy lane again: its rest's end, or soon where a worker holds it. */
function lookAgainAt(endpoint: WebhookEndpointDoc, nowMs: number, recheckMs: number): number {
  const until = endpoint.lane_until?.getTime() ?? nowMs;
  return endpoint.lane_holder ? Math.min(until, nowMs + recheckMs) : until;
}
