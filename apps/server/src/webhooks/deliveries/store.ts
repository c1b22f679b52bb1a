import { type AnyBulkWriteOperation, type Collection, type Db, type Filter, ObjectId } from "mongodb";
import type { EventType } from "../../events/model.js";
import { deleteInBatches } from "../../platform/database/batch-delete.js";
import { insertManyOnce } from "../../platform/database/insert-once.js";
import { LeaseFields } from "../../platform/database/lease.js";
import { newestFirst, type Page } from "../../platform/database/lists.js";
import type { Schema } from "../../spec/types.js";
import { RECENT, type RecentDeliveries, summarise } from "./recent.js";

/**
 * The `webhook_deliveries` collection: one document per delivery, i.e. one event queued to one
 * endpoint with all its attempts, made when the event happens, by a resend and by a recovery. It
 * is the only place a delivery's state lives (docs/decisions.md, "One record per delivery"): its
 * status, the attempts made, when the next is due, who holds it (the lease) and the last outcome.
 * The deliveries API, recovery and the delivery worker (webhooks/delivery/lane.ts) all read it here.
 *
 * At most one delivery of an event to an endpoint is `pending`: its `pending_key` is
 * `<endpoint_id> <event_id>` while it is and its own id once it settles, and a unique index on
 * `{workspace_id, pending_key}` (no partial indexes or transactions on the embedded fallback; the
 * workspace first, so a sharded cluster can keep it) makes that a database fact, however many
 * resends and recoveries race.
 *
 * The records are the delivery schedule, the only one (docs/decisions.md, "One schedule: the
 * delivery records"). `due_at` is the delivery's place in line: its next attempt's time, null once
 * settled; a claim leaves it as it is. The claim is apart from it (docs/webhooks.md, "What delivery
 * guarantees, and under which faults"): `lease_holder` names the claim holding the delivery and
 * `lease_until` (the database's time) says until when. Only the worker holding the endpoint's lane
 * claims (webhooks/endpoints/lanes.ts), and it sends only within that lease, so a delivery
 * still held when the lane changes hands was left by a worker that died or paused: the new holder
 * claims it again in its place, before every later event of the endpoint. Due deliveries go in
 * QUEUE_ORDER: by due time, then by event (ids are time-ordered), so an endpoint's events go
 * oldest first also within a burst queued together. A claim and an outcome are each one fenced
 * write for a whole batch; an outcome applies only for the claim that holds the delivery.
 */

export type DeliveryStatus = Schema<"WebhookDeliveryStatus">;

/** What queued a delivery: the event happening, a resend, or a recovery. */
export type DeliveryOrigin = "event" | "resend" | "recover";

export interface WebhookDeliveryDoc {
  _id: string;
  workspace_id: string;
  event_id: string;
  event_type: EventType;
  endpoint_id: string;
  status: DeliveryStatus;
  /** Attempts started so far. */
  attempts: number;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
  origin: DeliveryOrigin;
  /** The recovery (`rcv_…`) that queued it. */
  recovery_id?: string;
  /** `<endpoint_id> <event_id>` while pending, `settled <_id>` once settled (see the module comment). */
  pending_key: string;
  /** Its place in line: when its next attempt is due; null once settled (see the module comment). */
  due_at: Date | null;
  /** The claim holding it while an attempt is under way, else null. */
  lease_holder: string | null;
  /** When the claim's lease ends (the database's time); null or absent while nobody holds it. */
  lease_until?: Date | null;
  /**
   * Settled, and its outcome not yet counted in its endpoint's health (webhooks/delivery/health-count.ts):
   * set by the write that settles it, cleared once counted.
   */
  health_pending?: boolean;
}

/** A delivery claimed for one attempt by a lane run (see `claim`). */
export interface ClaimedDelivery {
  _id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  /** The number of the attempt this claim is for. */
  attempt: number;
  /** The previous attempt's worker held the lease and never recorded its outcome (it died). */
  interrupted: boolean;
  /** The claim holding it: its outcome is recorded under this name, or not at all. */
  holder: string;
}

/** What an attempt (or a delivery that stopped without one) did to its delivery. */
export type DeliveryOutcome =
  | { kind: "retry"; attempt: number; at: Date; statusCode: number | null; nextAttemptAt: Date }
  | {
      kind: "settled";
      status: Exclude<DeliveryStatus, "pending">;
      attempt: number;
      at: Date;
      statusCode: number | null;
      /** The endpoint's health counts it (a failure, or a success that ends failures): `health_pending`. */
      counts?: boolean;
    };

export const pendingKey = (endpointId: string, eventId: string): string => `${endpointId} ${eventId}`;
/** A settled delivery's key: its own, so it never stands in the way of a new pending one. */
const settledKey = (id: string): string => `settled ${id}`;

/** A claim's lease on a delivery (platform/database/lease.ts). */
const CLAIM = new LeaseFields("lease_holder", "lease_until");

/** The order due deliveries are taken in: due time, then event (oldest first), then delivery. */
const QUEUE_ORDER = { due_at: 1, event_id: 1, _id: 1 } as const;
/** The order settled deliveries are counted in: as they settled. */
const SETTLED_ORDER = { last_attempt_at: 1, _id: 1 } as const;

/** A settled delivery whose outcome its endpoint's health is to count. */
export type HealthPending = Pick<WebhookDeliveryDoc, "_id" | "endpoint_id" | "status" | "event_type">;
const HEALTH_FIELDS = { _id: 1, endpoint_id: 1, status: 1, event_type: 1 } as const;

/** A due delivery as the queue reads it: enough to claim it and to send it. */
export type DueDelivery = Pick<
  WebhookDeliveryDoc,
  "_id" | "workspace_id" | "endpoint_id" | "event_id" | "event_type" | "attempts" | "lease_holder"
>;
const DUE_FIELDS = {
  _id: 1,
  workspace_id: 1,
  endpoint_id: 1,
  event_id: 1,
  event_type: 1,
  attempts: 1,
  lease_holder: 1,
} as const;

export function toWebhookDelivery(doc: WebhookDeliveryDoc): Schema<"WebhookDelivery"> {
  return {
    id: doc._id,
    object: "webhook_delivery",
    event_id: doc.event_id,
    event_type: doc.event_type,
    endpoint_id: doc.endpoint_id,
    status: doc.status,
    attempts: doc.attempts,
    last_attempt_at: doc.last_attempt_at?.toISOString() ?? null,
    last_status_code: doc.last_status_code,
    next_attempt_at: doc.next_attempt_at?.toISOString() ?? null,
    recovery_id: doc.recovery_id ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** The per-endpoint list's filters, as plain values. */
export interface DeliveryFilters {
  status?: DeliveryStatus;
  eventType?: EventType;
  /** The recovery that queued them (`rcv_…`). */
  recoveryId?: string;
}

const zeroCounts = (): Schema<"DeliveryCounts"> => ({ succeeded: 0, failed: 0, pending: 0, dropped: 0 });

export class WebhookDeliveries {
  readonly collection: Collection<WebhookDeliveryDoc>;

  constructor(db: Db) {
    this.collection = db.collection<WebhookDeliveryDoc>("webhook_deliveries");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, pending_key: 1 }, name: "one_pending_in_workspace", unique: true },
      { key: { workspace_id: 1, endpoint_id: 1, _id: -1 }, name: "endpoint_newest" },
      { key: { workspace_id: 1, event_id: 1, _id: -1 }, name: "event_newest" },
      // A recovery's deliveries (listed by `recovery_id`, counted for getWebhookRecovery). Not sparse:
      // a sparse compound index holds every document anyway, as `_id` is in all of them.
      { key: { workspace_id: 1, recovery_id: 1, _id: -1 }, name: "recovery_newest" },
      // Recovery asks which events have a pending or succeeded delivery to the endpoint since a time.
      { key: { endpoint_id: 1, status: 1, created_at: 1 }, name: "endpoint_status_created" },
      { key: { created_at: 1 }, name: "retention_sweep" },
      // The queue: a lane claims its endpoint's due deliveries in QUEUE_ORDER; the dispatcher finds
      // due deliveries of every endpoint in that order (the endpoint id rides along in the key, so
      // leaving out the endpoints it is not looking for reads no document).
      { key: { endpoint_id: 1, due_at: 1, event_id: 1, _id: 1 }, name: "endpoint_queue" },
      { key: { due_at: 1, event_id: 1, _id: 1, endpoint_id: 1 }, name: "queue" },
    ]);
  }

  /**
   * Stores new deliveries in one round trip. A delivery whose `_id` exists (the relay ran again)
   * or whose event already has a pending delivery to the endpoint is not stored. Returns, per
   * delivery, whether it was inserted now.
   */
  async insertOnce(docs: WebhookDeliveryDoc[]): Promise<boolean[]> {
    if (docs.length === 0) return [];
    return insertManyOnce(this.collection, docs);
  }

  /**
   * Claims up to `limit` of the endpoint's due deliveries in queue order, for one attempt each
   * (a read, then `claimFound`).
   */
  async claim(endpointId: string, limit: number, leaseMs: number, now: Date): Promise<ClaimedDelivery[]> {
    const found = await this.collection
      .find(
        { endpoint_id: endpointId, due_at: { $lte: now } },
        { projection: DUE_FIELDS, sort: QUEUE_ORDER, limit },
      )
      .toArray();
    return this.claimFound(found, leaseMs, now);
  }

  /**
   * The deliveries due at `now`, of every endpoint but those in `except`, in queue order: what
   * the dispatcher hands out to lanes. At most `limit`; an endpoint with a backlog that another
   * lane is working through is left out by its id, so it hides no other endpoint.
   */
  due(limit: number, except: readonly string[], now: Date): Promise<DueDelivery[]> {
    const filter: Filter<WebhookDeliveryDoc> = { due_at: { $lte: now } };
    if (except.length > 0) filter.endpoint_id = { $nin: [...except] };
    return this.collection.find(filter, { projection: DUE_FIELDS, sort: QUEUE_ORDER, limit }).toArray();
  }

  /**
   * Claims deliveries read due (by `claim` or `due`, of one endpoint or many) for one attempt
   * each: one update fenced by each delivery's attempt count, so two workers never claim the same
   * attempt. The claim holds each delivery until `now + leaseMs` (`lease_until`; its `due_at`, its
   * place in line, stays) and counts the attempt; one still held by an earlier claim was its
   * lane's before this worker took the lane, and is claimed again as `interrupted`. Returns those
   * claimed, in the order given.
   */
  async claimFound(found: DueDelivery[], leaseMs: number, now: Date): Promise<ClaimedDelivery[]> {
    if (found.length === 0) return [];
    const holder = new ObjectId().toHexString();
    const { modifiedCount } = await this.collection.updateMany(
      {
        _id: { $in: found.map((doc) => doc._id) },
        due_at: { $lte: now },
        $or: found.map((doc) => ({ _id: doc._id, attempts: doc.attempts })),
      },
      {
        $set: { ...CLAIM.take(holder, now, leaseMs), updated_at: now },
        $inc: { attempts: 1 },
      },
    );
    const claimed = (doc: DueDelivery, attempt: number): ClaimedDelivery => ({
      _id: doc._id,
      workspace_id: doc.workspace_id,
      endpoint_id: doc.endpoint_id,
      event_id: doc.event_id,
      event_type: doc.event_type,
      attempt,
      interrupted: doc.lease_holder != null && doc.attempts > 0,
      holder,
    });
    if (modifiedCount === found.length) return found.map((doc) => claimed(doc, doc.attempts + 1));
    // Another worker claimed some of them between the read and the update: ask which are ours.
    const ours = await this.collection
      .find(
        { _id: { $in: found.map((doc) => doc._id) }, ...CLAIM.heldBy(holder) },
        { projection: { attempts: 1 } },
      )
      .toArray();
    const attemptOf = new Map(ours.map((doc) => [doc._id, doc.attempts]));
    return found.flatMap((doc) => {
      const attempt = attemptOf.get(doc._id);
      return attempt === undefined ? [] : [claimed(doc, attempt)];
    });
  }

  /**
   * Records many attempts' outcomes in one round trip. Each write applies only while the delivery
   * is still at that attempt and held by that claim (a worker whose lease was taken over writes
   * nothing, whatever it learnt); settling gives `pending_key` the delivery's own key, so the event
   * may be queued again, and marks an outcome the endpoint's health counts (`health_pending`).
   * Returns how many writes applied.
   */
  async recordOutcomes(
    outcomes: Array<{ id: string; holder: string; outcome: DeliveryOutcome }>,
  ): Promise<number> {
    if (outcomes.length === 0) return 0;
    const operations: AnyBulkWriteOperation<WebhookDeliveryDoc>[] = outcomes.map(
      ({ id, holder, outcome }) => {
        const filter = {
          _id: id,
          status: "pending" as const,
          attempts: outcome.attempt,
          ...CLAIM.heldBy(holder),
        };
        const set: Partial<WebhookDeliveryDoc> = {
          updated_at: outcome.at,
          last_attempt_at: outcome.at,
          last_status_code: outcome.statusCode,
          ...CLAIM.released(),
        };
        if (outcome.kind === "retry") {
          Object.assign(set, { next_attempt_at: outcome.nextAttemptAt, due_at: outcome.nextAttemptAt });
          return { updateOne: { filter, update: { $set: set } } };
        }
        Object.assign(set, {
          status: outcome.status,
          next_attempt_at: null,
          due_at: null,
          pending_key: settledKey(id),
          ...(outcome.counts && { health_pending: true }),
        });
        return { updateOne: { filter, update: { $set: set } } };
      },
    );
    const { matchedCount } = await this.collection.bulkWrite(operations, { ordered: false });
    return matchedCount;
  }

  /**
   * Gives back claimed deliveries that were not sent (their lane's lease ran too short to send
   * them): their attempt is not counted and they are claimable again at once, in their place. A
   * delivery another claim took meanwhile is left as it is.
   */
  async unclaim(deliveries: Array<Pick<ClaimedDelivery, "_id" | "attempt" | "holder">>): Promise<void> {
    if (deliveries.length === 0) return;
    await this.collection.bulkWrite(
      deliveries.map(({ _id, attempt, holder }) => ({
        updateOne: {
          filter: { _id, status: "pending" as const, attempts: attempt, ...CLAIM.heldBy(holder) },
          update: { $set: CLAIM.released(), $inc: { attempts: -1 } },
        },
      })),
      { ordered: false },
    );
  }

  /**
   * Of these settled deliveries, those whose outcome the endpoint's health has yet to count, in
   * the order they settled (webhooks/delivery/health-count.ts).
   */
  healthPending(ids: string[]): Promise<HealthPending[]> {
    return this.collection
      .find({ _id: { $in: ids }, health_pending: true }, { projection: HEALTH_FIELDS, sort: SETTLED_ORDER })
      .toArray();
  }

  /**
   * Deliveries settled before `before` whose count is still pending: their worker died between
   * the outcome and the count.
   */
  healthPendingSince(before: Date, limit: number): Promise<HealthPending[]> {
    return this.collection
      .find(
        { health_pending: true, updated_at: { $lt: before } },
        { projection: HEALTH_FIELDS, sort: SETTLED_ORDER, limit },
      )
      .toArray();
  }

  /** Their outcomes are counted in their endpoint's health. */
  async healthCounted(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: ids } }, { $unset: { health_pending: "" } });
  }

  /** When the endpoint's lane has work next: the earliest `due_at` of its pending deliveries, or null. */
  /** The workspace's deliveries of these ids (those that exist), in no particular order. */
  findIn(workspaceId: string, ids: string[]): Promise<WebhookDeliveryDoc[]> {
    return this.collection.find({ _id: { $in: ids }, workspace_id: workspaceId }).toArray();
  }

  /** One delivery by id, as stored (the endpoints store's `readDelivery`). */
  async findById(id: string): Promise<WebhookDeliveryDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Deliveries waiting for a first attempt or a retry: the queue the pending gauge shows. */
  async countPending(): Promise<number> {
    return this.collection.countDocuments({ status: "pending" });
  }

  async nextDue(endpointId: string): Promise<Date | null> {
    const [first] = await this.collection
      .find(
        // The range on `due_at` leaves settled deliveries out (and lets the fallback's queue plan serve it).
        { endpoint_id: endpointId, due_at: { $gte: new Date(0) } },
        { projection: { _id: 0, due_at: 1 }, sort: QUEUE_ORDER, limit: 1 },
      )
      .toArray();
    return first?.due_at ?? null;
  }

  /** An endpoint was disabled, paused or deleted: its pending deliveries are dropped. */
  async dropPending(endpointId: string, now = new Date()): Promise<number> {
    const pending = await this.collection
      .find({ endpoint_id: endpointId, status: "pending" }, { projection: { _id: 1 } })
      .toArray();
    if (pending.length === 0) return 0;
    const { modifiedCount } = await this.collection.bulkWrite(
      pending.map(({ _id }) => ({
        updateOne: {
          filter: { _id, status: "pending" as const },
          update: {
            $set: {
              status: "dropped" as const,
              next_attempt_at: null,
              due_at: null,
              ...CLAIM.released(),
              updated_at: now,
              pending_key: settledKey(_id),
            },
          },
        },
      })),
      { ordered: false },
    );
    return modifiedCount;
  }

  /**
   * The events with a pending or succeeded delivery to the endpoint made since `since` (a delivery
   * of an event is made after the event): a recovery of a window starting then skips them. One
   * range read of the endpoint's deliveries for the whole window, rather than one `$in` per batch
   * of events, which the embedded fallback answers by scanning the collection each time.
   */
  async coveredSince(endpointId: string, since: Date): Promise<Set<string>> {
    const docs = await this.collection
      .find(
        { endpoint_id: endpointId, status: { $in: ["pending", "succeeded"] }, created_at: { $gte: since } },
        { projection: { _id: 0, event_id: 1 } },
      )
      .toArray();
    return new Set(docs.map((doc) => doc.event_id));
  }

  /**
   * Of these events, every delivery to the endpoint, with its status and the recovery that queued
   * it: what a recovery judges each event by (webhooks/recovery/missed.ts).
   */
  outcomesOf(
    endpoint: { _id: string; workspace_id: string },
    eventIds: string[],
  ): Promise<Pick<WebhookDeliveryDoc, "event_id" | "status" | "recovery_id">[]> {
    return this.collection
      .find(
        { workspace_id: endpoint.workspace_id, event_id: { $in: eventIds }, endpoint_id: endpoint._id },
        { projection: { _id: 0, event_id: 1, status: 1, recovery_id: 1 } },
      )
      .toArray();
  }

  /**
   * The event of the endpoint's first failure since it was last healthy: its oldest `failed` or
   * `dropped` delivery after its newest `succeeded` one (ids in the order of their events, for
   * deliveries of events as they happen), or null when none failed since. Two reads on the
   * `endpoint_newest` index, each stopping at its first match.
   */
  async firstFailureSinceHealthy(endpoint: { _id: string; workspace_id: string }): Promise<string | null> {
    const scope = { workspace_id: endpoint.workspace_id, endpoint_id: endpoint._id };
    const healthy = await this.collection.findOne(
      { ...scope, status: "succeeded" },
      { sort: { _id: -1 }, projection: { _id: 1 } },
    );
    const failed = await this.collection.findOne(
      { ...scope, status: { $in: ["failed", "dropped"] }, ...(healthy ? { _id: { $gt: healthy._id } } : {}) },
      { sort: { _id: 1 }, projection: { event_id: 1 } },
    );
    return failed?.event_id ?? null;
  }

  /** The status and time of the endpoint's deliveries made in [since, until): its stats. */
  madeBetween(
    endpointId: string,
    since: Date,
    until: Date,
  ): Promise<Pick<WebhookDeliveryDoc, "status" | "created_at">[]> {
    return this.collection
      .find(
        { endpoint_id: endpointId, created_at: { $gte: since, $lt: until } },
        { projection: { _id: 0, status: 1, created_at: 1 } },
      )
      .toArray();
  }

  /** A page of an endpoint's deliveries, newest first, one more than asked for `has_more`. */
  listForEndpoint(
    endpoint: { _id: string; workspace_id: string },
    filters: DeliveryFilters,
    page: Page,
  ): Promise<WebhookDeliveryDoc[]> {
    const filter: Record<string, unknown> = { endpoint_id: endpoint._id };
    if (filters.status !== undefined) filter.status = filters.status;
    if (filters.eventType !== undefined) filter.event_type = filters.eventType;
    if (filters.recoveryId !== undefined) filter.recovery_id = filters.recoveryId;
    return newestFirst(this.collection, endpoint.workspace_id, filter, page);
  }

  /**
   * The deliveries a recovery queued, counted by their status now: one read of the recovery's
   * deliveries by the `recovery_newest` index, the status alone of each (counted here, as the
   * endpoint's stats are: no `$group` the embedded fallback may lack). Its cost grows with the
   * recovery's size: one index entry and one small document per delivery it queued.
   */
  async countForRecovery(recovery: { _id: string; workspace_id: string }): Promise<Schema<"DeliveryCounts">> {
    const docs = await this.collection
      .find(
        { workspace_id: recovery.workspace_id, recovery_id: recovery._id },
        { projection: { _id: 0, status: 1 } },
      )
      .toArray();
    const counts = zeroCounts();
    for (const { status } of docs) counts[status] += 1;
    return counts;
  }

  /**
   * The status and last attempt of each endpoint's newest `perEndpoint` deliveries: one read per
   * endpoint, all at once, each a bounded walk of its `endpoint_newest` index (what
   * listWebhookEndpoints summarises, `recentOf`).
   */
  async newestOf(
    workspaceId: string,
    endpointIds: string[],
    perEndpoint: number,
  ): Promise<Map<string, Pick<WebhookDeliveryDoc, "status" | "last_attempt_at">[]>> {
    const read = (endpointId: string) =>
      this.collection
        .find(
          { workspace_id: workspaceId, endpoint_id: endpointId },
          { projection: { _id: 0, status: 1, last_attempt_at: 1 }, sort: { _id: -1 }, limit: perEndpoint },
        )
        .toArray();
    const all = await Promise.all(endpointIds.map(read));
    return new Map(endpointIds.map((id, i) => [id, all[i] ?? []]));
  }

  /** How the newest deliveries of a page of one workspace's endpoints went, by endpoint id (./recent.ts). */
  async recentOf(workspaceId: string, endpointIds: string[]): Promise<Map<string, RecentDeliveries>> {
    const newest = await this.newestOf(workspaceId, endpointIds, RECENT);
    return new Map([...newest].map(([id, docs]) => [id, summarise(docs)]));
  }

  /** A page of an event's deliveries, newest first. */
  listForEvent(event: { _id: string; workspace_id: string }, page: Page): Promise<WebhookDeliveryDoc[]> {
    return newestFirst(this.collection, event.workspace_id, { event_id: event._id }, page);
  }

  /**
   * A page of the deliveries of several events (up to 100, the spec's bound), newest first: a
   * page of events and where each went in one read. On MongoDB the `event_newest` index serves
   * it, one range per event merged in id order; no document of another event is read.
   */
  listForEvents(workspaceId: string, eventIds: readonly string[], page: Page): Promise<WebhookDeliveryDoc[]> {
    return newestFirst(this.collection, workspaceId, { event_id: { $in: [...eventIds] } }, page);
  }

  /**
   * Removes deliveries made more than `retentionMs` ago, in batches; returns how many went. A
   * pending one stays (its attempts are still to come), and so does one whose outcome its
   * endpoint's health has yet to count.
   */
  sweep(retentionMs: number, now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, {
      created_at: { $lt: new Date(now.getTime() - retentionMs) },
      status: { $ne: "pending" },
      health_pending: { $ne: true },
    });
  }
}
