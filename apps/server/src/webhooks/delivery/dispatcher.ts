import type { Clock } from "../../platform/clock.js";
import type { Logger } from "../../platform/logger.js";
import type {
  ClaimedDelivery,
  DueDelivery,
  WebhookDeliveries,
  WebhookDeliveryDoc,
} from "../deliveries/store.js";
import type { LaneLeases } from "../endpoints/lanes.js";
import type { WebhookEndpointDoc } from "../endpoints/store.js";
import type { DeliveryOfEvent, EventBytes } from "./recent-events.js";
import { type RunningLane, RunningLanes } from "./running-lanes.js";

/**
 * The one loop of a worker that takes due work (docs/decisions.md, "One schedule: the delivery
 * records"). A round reads the due deliveries of every endpoint in queue order (one indexed read,
 * leaving out the endpoints whose lanes run here or rest elsewhere), takes the lanes of their
 * endpoints that nobody holds (one update and one read for them all), claims each lane's first
 * batch from what it read (one fenced update for them all), and starts the lanes; each lane then
 * goes on by itself (webhooks/delivery/lane.ts). So a fan-out to thousands of endpoints costs a
 * few round trips per round, not per endpoint, and an idle endpoint costs nothing.
 *
 * Rounds run one at a time and are asked for by whatever may bring work: a delivery queued in
 * this process, the wake source (a change stream or a poll), a lane ending (a slot is free, and
 * what it missed at its end is found), and a timer for the earliest retry or resting lane known.
 * Nothing here decides whether a delivery happens; a round only finds it sooner.
 */

/** Due deliveries read per round at most: many endpoints' first batches at once. */
const ROUND_READ = 1_000;
/** At most this many endpoints are left out of a round's read by id. */
const MOST_LEFT_OUT = 2_000;
/** A round asked for while lanes end is gathered with the others for this long. */
const GATHER_MS = 2;

/** What a lane run starts from: the round's take of its lane and claim of its first batch. */
export interface LaneStart {
  endpoint: WebhookEndpointDoc;
  first: ClaimedDelivery[];
  /** Whether more than that batch may be due (the round's read saw more of the endpoint's). */
  more: boolean;
  /** The round's read of its first batches' events. */
  events: Promise<EventBytes[]>;
  /** When the lease was asked for, on the monotonic clock: it holds until this + the lease. */
  leasedAt: number;
}

export interface DispatcherDeps {
  deliveries: WebhookDeliveries;
  /** The database's time: leases and due times are decided on it. */
  clock: Clock;
  leases: LaneLeases;
  holder: string;
  /** Lanes run at once in this process (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Deliveries in a lane's batch (WEBHOOK_ENDPOINT_CONCURRENCY). */
  batchSize: number;
  leaseMs: number;
  /** How soon a lane another worker holds is looked at again (WEBHOOK_HELD_RECHECK_MS). */
  heldRecheckMs: number;
  /** The bytes of these events; a round reads its first batches' while it takes their lanes. */
  readEvents: (deliveries: DeliveryOfEvent[]) => Promise<EventBytes[]>;
  /** Runs a lane from its first batch. */
  runLane: (start: LaneStart, lane: RunningLane) => Promise<void>;
  /** Drops the pending deliveries of an endpoint deleted, disabled or paused. */
  dropPending: (endpointId: string) => Promise<void>;
  logger: Logger;
}

export class Dispatcher {
  readonly lanes = new RunningLanes();
  /**
   * Endpoints whose lane another worker holds, or that rest (paced), and when a round looks at
   * them again (the database's epoch ms): a held lane's soon, whatever its lease says
   * (WEBHOOK_HELD_RECHECK_MS, webhooks/endpoints/lanes.ts), so a lane let go early is taken at once.
   */
  private readonly resting = new Map<string, number>();
  /** The rounds under way, if any (stop waits for them: the database closes after). */
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private gatherTimer: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  /** Set by a round that found work, for the wake source's poll (it relaxes when idle). */
  foundWork = false;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Work may be due: a round runs now, or right after the one under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.rounds().finally(() => {
      this.running = undefined;
    });
  }

  /** A round runs at `at` (or sooner, if something else asks). */
  wakeAt(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timerAt = Number.POSITIVE_INFINITY;
        this.wake();
      },
      Math.max(0, at - this.deps.clock.now()),
    );
    this.timer.unref();
  }

  /** Deliveries were queued in this process: lanes running here hear at once, the rest wake a round. */
  queued(deliveries: readonly Pick<WebhookDeliveryDoc, "endpoint_id" | "due_at">[]): void {
    const due = new Map<string, Date>();
    for (const { endpoint_id: id, due_at: at } of deliveries) {
      const earliest = due.get(id);
      if (at && (!earliest || at < earliest)) due.set(id, at);
    }
    const elsewhere = this.lanes.notify(due);
    let earliest = Number.POSITIVE_INFINITY;
    for (const at of elsewhere.values()) earliest = Math.min(earliest, at.getTime());
    if (earliest <= this.deps.clock.now()) this.wake();
    else if (earliest < Number.POSITIVE_INFINITY) this.wakeAt(earliest);
  }

  /** Stops asking for rounds; returns once every lane running here has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.gatherTimer);
    await this.running;
    await this.lanes.drain();
  }

  private async rounds(): Promise<void> {
    try {
      do {
        this.again = false;
        if (await this.round()) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      // The database is away: the next wake or poll tries again.
      this.deps.logger.warn({ err }, "webhook dispatch round failed; trying again");
      this.wakeAt(this.deps.clock.now() + 1_000);
    }
  }

  /** One round; true when more may be due at once (it read a full page and has slots left). */
  private async round(): Promise<boolean> {
    const { deps } = this;
    const free = deps.concurrency - this.lanes.size;
    if (free <= 0) return false;
    // As many as the free slots' first batches can take: a fuller read only costs the database.
    const read = Math.min(ROUND_READ, free * deps.batchSize);
    const found = await deps.deliveries.due(read, this.leftOut(), new Date(deps.clock.now()));
    this.foundWork = found.length > 0;
    if (found.length === 0) return false;
    const firsts = firstBatches(found, deps.batchSize, free);
    // Read beside the lease take rather than after it, by each lane: one round trip less per round.
    const events = deps.readEvents([...firsts.values()].flat());
    // A round that fails before any lane waits for them must not leave the read's failure unheard.
    events.catch(() => undefined);
    const leasedAt = performance.now();
    const now = new Date(deps.clock.now());
    const lease = { holder: deps.holder, leaseMs: deps.leaseMs, recheckMs: deps.heldRecheckMs };
    const { taken, busy, gone } = await deps.leases.take([...firsts.keys()], lease, now);
    for (const [id, until] of busy) this.rest(id, until);
    await Promise.all(gone.map((id) => deps.dropPending(id)));
    const claimed = await deps.deliveries.claimFound(
      // A rate-limited lane claims no more than it sends within a moment.
      taken.flatMap((endpoint) =>
        (firsts.get(endpoint._id) ?? []).slice(0, firstClaim(endpoint, deps.batchSize)),
      ),
      deps.leaseMs,
      now,
    );
    // A lane goes on after its first batch only when the read saw more of its endpoint's
    // deliveries than that batch took. One that saw less ends after it: whatever else of its
    // endpoint is due (past this read, or queued meanwhile) is found by the round its end asks
    // for, and a fan-out (one delivery for each of many endpoints) costs no lane a read of its own.
    for (const endpoint of taken) {
      const first = claimed.filter((d) => d.endpoint_id === endpoint._id);
      const seen = firsts.get(endpoint._id)?.length ?? 0;
      this.start({ endpoint, first, more: seen >= deps.batchSize || first.length < seen, events, leasedAt });
    }
    // A full read may have left endpoints unread: another round, while slots are free.
    return found.length === read && this.lanes.size < deps.concurrency;
  }

  /** The endpoints a round leaves out: lanes running here, and those resting elsewhere. */
  private leftOut(): string[] {
    const now = this.deps.clock.now();
    for (const [id, until] of this.resting) if (until <= now) this.resting.delete(id);
    return [...this.lanes.ids(), ...this.resting.keys()].slice(0, MOST_LEFT_OUT);
  }

  private rest(endpointId: string, until: number): void {
    this.resting.set(endpointId, until);
    this.wakeAt(until);
  }

  private start(start: LaneStart): void {
    const endpointId = start.endpoint._id;
    void this.lanes
      .run(endpointId, (lane) => this.deps.runLane(start, lane))
      .catch((err) =>
        // Its claimed deliveries come back when their lease ends, its lane when the lease does.
        this.deps.logger.warn({ err, endpointId }, "webhook lane run failed"),
      )
      .finally(() => this.laneEnded());
  }

  /** A slot is free, and the lane may have missed news at its end: a round, gathered with others. */
  private laneEnded(): void {
    if (this.stopped || this.gatherTimer) return;
    this.gatherTimer = setTimeout(() => {
      this.gatherTimer = undefined;
      this.wake();
    }, GATHER_MS);
  }

  /** Whether endpoints wait for a slot here (a lane past its slice then yields). */
  crowded(): boolean {
    return this.lanes.size >= this.deps.concurrency && this.foundWork;
  }
}

/** How many of its due deliveries a lane's first batch claims: a rate-limited one, a second's worth. */
const firstClaim = (endpoint: WebhookEndpointDoc, batchSize: number) =>
  endpoint.rate_limit ? Math.max(1, Math.min(batchSize, Math.floor(endpoint.rate_limit))) : batchSize;

/** Up to `lanes` endpoints' first batches, in the order their first due delivery was read. */
function firstBatches(found: DueDelivery[], batchSize: number, lanes: number): Map<string, DueDelivery[]> {
  const batches = new Map<string, DueDelivery[]>();
  for (const delivery of found) {
    const batch = batches.get(delivery.endpoint_id);
    if (batch) {
      if (batch.length < batchSize) batch.push(delivery);
    } else if (batches.size < lanes) {
      batches.set(delivery.endpoint_id, [delivery]);
    }
  }
  return batches;
}
