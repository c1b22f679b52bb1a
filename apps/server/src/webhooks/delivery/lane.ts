import pLimit from "p-limit";
import type { Dispatcher as HttpDispatcher } from "undici";
import type { Clock } from "../../platform/clock.js";
import { HeldLease } from "../../platform/database/lease.js";
import type { Logger } from "../../platform/logger.js";
import type { Metrics } from "../../platform/metrics/metrics.js";
import { withDeliveryAttemptSpan } from "../../platform/telemetry/index.js";
import { type DeliveryAttemptInput, INTERRUPTED_ATTEMPT } from "../deliveries/attempts.js";
import type { ClaimedDelivery, DeliveryOutcome } from "../deliveries/store.js";
import type { LaneLeases } from "../endpoints/lanes.js";
import type { WebhookEndpointDoc } from "../endpoints/store.js";
import type { WebhookStores as Store } from "../stores.js";
import { type AttemptReport, attemptDelivery } from "./attempt.js";
import type { LaneStart } from "./dispatcher.js";
import { countHealth } from "./health-count.js";
import { Pace } from "./pace.js";
import type { DeliveryOfEvent, EventBytes } from "./recent-events.js";
import type { Recorder } from "./recorder.js";
import { retryDelay } from "./retry-schedule.js";
import type { RunningLane } from "./running-lanes.js";

/**
 * One run of an endpoint's lane (webhooks/delivery/dispatcher.ts starts it holding the endpoint's
 * lease, webhooks/endpoints/lanes.ts): send the batch claimed for it, at most `perEndpoint` at a
 * time and at the endpoint's pace (its `rate_limit`, a receiver's `Retry-After`), record the
 * outcomes (one bulk write, and the attempts log beside it), then renew the lease, claim the next
 * batch and go on while deliveries are due; let the lane go at the end. A run yields after
 * `sliceMs` when other endpoints wait for a slot, so one endpoint's backlog cannot keep a slot
 * from the others. Rules kept here: a delivery fails when its last attempt fails (1 + the retry
 * delays), each failed delivery counts toward the endpoint's 15 consecutive failures, a success
 * resets them (webhooks/delivery/health-count.ts), and an endpoint disabled, paused or deleted
 * drops its pending deliveries. A run sends and claims only while its lease has room for an
 * attempt (`HeldLease`, platform/database/lease.ts); what it claimed and could not send it gives back.
 */

/** The part of the server's metrics that delivery feeds. */
export type DeliveryMetrics = Pick<Metrics, "deliveryAttempt" | "deliveryFinished">;

/** How a worker runs its lanes. */
export interface LaneSettings {
  /** This worker's name in the leases it holds. */
  holder: string;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /** Attempts in flight at once for one endpoint (WEBHOOK_ENDPOINT_CONCURRENCY), and a batch's size. */
  perEndpoint: number;
  /** How long a lease holds the lane and a claim its deliveries: past it, another worker may take them. */
  leaseMs: number;
  /** Left of the lease beyond an attempt's timeout for a send or a claim to start (WEBHOOK_LEASE_MARGIN_MS). */
  marginMs: number;
  /** How long a run may go on before it yields its slot to waiting endpoints. */
  sliceMs: number;
}

/** What every lane of a worker works with, built once per worker (webhooks/delivery/worker.ts). */
export interface LaneServices {
  store: Store;
  leases: LaneLeases;
  /** The database's time (due times, leases, retries). */
  clock: Clock;
  /** Where attempts go out: no attempt waits for a socket (webhooks/delivery/http-client.ts). */
  http: HttpDispatcher;
  /** Records a batch's outcomes and attempts, gathered with other lanes' (webhooks/delivery/recorder.ts). */
  record: Recorder;
  /** The bytes of these deliveries' events (those past retention are missing). */
  readEvents: (deliveries: DeliveryOfEvent[]) => Promise<EventBytes[]>;
  logger: Logger;
  metrics?: DeliveryMetrics;
  settings: LaneSettings;
}

/** What a run asks of the worker it runs in (WebhookDelivery, webhooks/delivery/worker.ts). */
export interface LaneHost {
  /**
   * After a short batch: waits a moment (not past `until`, epoch ms) for more of the lane's
   * endpoint's deliveries to come due; true when some may have (webhooks/delivery/running-lanes.ts).
   */
  linger(lane: RunningLane, until: number): Promise<boolean>;
  /** True while other endpoints wait for one of this process's lane slots. */
  crowded(): boolean;
  /** True once the process is stopping: the run ends after its batch and lets the lane go. */
  stopping(): boolean;
  /** A retry of this lane's was scheduled for `at` (the dispatcher looks again then). */
  retryAt(at: Date): void;
}

/** A paced lane waits this long at most for its next send before it lets its slot go. */
const MAX_REST_MS = 1_000;

type Settled = { delivery: ClaimedDelivery; outcome: DeliveryOutcome; attempt?: DeliveryAttemptInput };
/** A claimed delivery that was not sent: the lease had no room left for it. */
type Unsent = { delivery: ClaimedDelivery; unsent: true };

/** What every delivery of one batch is sent with: opened once per batch. */
interface Batch {
  deliveries: ClaimedDelivery[];
  /** The endpoint's secrets valid now, newest first. */
  secrets: string[];
  /** The endpoint's custom headers. */
  headers: Record<string, string>;
  eventOf: Map<string, EventBytes>;
}

/**
 * Runs the lane from its first claimed batch until it has nothing due, then lets it go. When the
 * round's read saw no more of the endpoint's deliveries than the first batch (`start.more`), the
 * lane ends after it (having lingered, where it may), and whatever else is due is found by the
 * round its end asks for.
 */
export function runLane(services: LaneServices, host: LaneHost, lane: RunningLane, start: LaneStart) {
  return new LaneRun(services, host, lane, start).run();
}

class LaneRun {
  private endpoint: WebhookEndpointDoc;
  private readonly settings: LaneSettings;
  private readonly lease: HeldLease;
  private readonly pace: Pace;
  private readonly yieldAt: number;

  constructor(
    private readonly services: LaneServices,
    private readonly host: LaneHost,
    private readonly lane: RunningLane,
    private readonly start: LaneStart,
  ) {
    this.settings = services.settings;
    this.endpoint = start.endpoint;
    const { leaseMs, timeoutMs, marginMs, sliceMs } = this.settings;
    this.lease = new HeldLease(start.leasedAt, leaseMs, timeoutMs + marginMs);
    this.pace = new Pace(this.endpoint.rate_limit ?? null, this.now());
    this.yieldAt = this.now() + sliceMs;
  }

  async run(): Promise<void> {
    const { start, host } = this;
    let deliveries = start.first;
    try {
      for (;;) {
        if (deliveries.length > 0) {
          const first = deliveries === start.first;
          if (!(await this.sendBatch(deliveries, first ? start.events : undefined))) return;
          if (host.stopping() || (this.now() >= this.yieldAt && host.crowded())) return;
          if (this.pace.nextAt - this.now() > MAX_REST_MS) return;
          if (!start.more && first && !(await host.linger(this.lane, this.yieldAt))) return;
        }
        if (!(await this.renew())) return;
        deliveries = await this.claim();
        if (deliveries.length === 0 && (host.stopping() || !(await host.linger(this.lane, this.yieldAt))))
          return;
      }
    } finally {
      const until = new Date(Math.max(this.now(), this.pace.nextAt));
      await this.services.leases.release(this.endpoint._id, this.settings.holder, until);
    }
  }

  private now(): number {
    return this.services.clock.now();
  }

  /**
   * Renews the lane's lease and reads the endpoint as it is now (a disable, an edit or a rotation
   * applies to the next batch); false when the run must end: the lease is lost, the endpoint is
   * disabled, paused or deleted (its pending deliveries are then dropped), or the renew came back
   * too late (a pause, a slow database) to leave room for a send.
   */
  private async renew(): Promise<boolean> {
    const { leases, store } = this.services;
    const { holder, leaseMs } = this.settings;
    const askedAt = performance.now();
    const renewed = await leases.renew(this.endpoint._id, holder, leaseMs, new Date(this.now()));
    if (renewed?.status !== "enabled") {
      // Disabled, paused or deleted meanwhile (or the lease was lost: then nothing to drop).
      if (renewed || !(await store.webhookEndpoints.find(this.endpoint._id))) await this.dropPending();
      return false;
    }
    this.lease.renewed(askedAt);
    this.endpoint = renewed;
    this.pace.setRate(renewed.rate_limit ?? null);
    return this.lease.hasRoom();
  }

  /** Claims the endpoint's next due deliveries, no more than it sends within a moment at its pace. */
  private claim(): Promise<ClaimedDelivery[]> {
    const { perEndpoint, leaseMs } = this.settings;
    const limit = this.pace.fits(MAX_REST_MS, perEndpoint);
    return this.services.store.webhookDeliveries.claim(
      this.endpoint._id,
      limit,
      leaseMs,
      new Date(this.now()),
    );
  }

  private async dropPending(): Promise<void> {
    const dropped = await this.services.store.webhookDeliveries.dropPending(this.endpoint._id);
    for (let i = 0; i < dropped; i++) this.services.metrics?.deliveryFinished("dropped");
  }

  /**
   * Sends one claimed batch and records it; false when the run must end: a failure disabled the
   * endpoint, or the lease ran short and some of the batch went back unsent. `known`: the batch's
   * events, when read already (the dispatcher's round reads the first batch's).
   */
  private async sendBatch(deliveries: ClaimedDelivery[], known?: Promise<EventBytes[]>): Promise<boolean> {
    const { store, readEvents } = this.services;
    // Once per batch: the secrets and header values valid now. One this process cannot open (a
    // key it lacks, SecretKeyError) fails the run; the claimed attempts come back when their lease ends.
    const secrets = store.secrets.signingSecrets(this.endpoint);
    const headers = store.secrets.customHeaders(this.endpoint);
    const events = await (known ?? readEvents(deliveries));
    const batch: Batch = { deliveries, secrets, headers, eventOf: new Map(events.map((e) => [e._id, e])) };
    const limit = pLimit(this.settings.perEndpoint);
    // In the order they finish: the endpoint's failure count follows the outcomes as they happened.
    const settled: Settled[] = [];
    const unsent: ClaimedDelivery[] = [];
    await Promise.all(
      deliveries.map((delivery) =>
        limit(async () => {
          const done = await this.sendOne(batch, delivery);
          if ("unsent" in done) unsent.push(done.delivery);
          else settled.push(done);
        }),
      ),
    );
    await store.webhookDeliveries.unclaim(unsent);
    this.markCounted(settled);
    await this.record(deliveries, settled);
    return (await this.countOutcomes(settled)) && unsent.length === 0;
  }

  /**
   * One delivery of the batch: settled without a send when nothing can be sent, given back when
   * the lease has no room for it, else one attempt at its pace.
   */
  private async sendOne(batch: Batch, delivery: ClaimedDelivery): Promise<Settled | Unsent> {
    const { pace, lease } = this;
    const event = batch.eventOf.get(delivery.event_id);
    const unsent = { attempt: delivery.attempt, at: new Date(this.now()), statusCode: null };
    // Its event is past retention: nothing left to send.
    if (event === undefined) return { delivery, outcome: { kind: "settled", status: "dropped", ...unsent } };
    // Crashes used up the attempts.
    if (delivery.attempt > 1 + this.settings.retryDelaysMs.length) {
      return { delivery, outcome: { kind: "settled", status: "failed", ...unsent } };
    }
    const wait = pace.book(this.now()) - this.now();
    if (wait > 0) await sleep(wait);
    // The last look before the send: a pause (or a slow batch) may have eaten the lease.
    if (!lease.hasRoom()) return { delivery, unsent: true };
    pace.started(this.now());
    const report = await this.attempt(batch, delivery, event);
    const outcome = this.outcomeOf(delivery.attempt, report);
    if (report.retryAfterMs !== undefined) await this.holdFor(report.retryAfterMs);
    if (outcome.kind === "retry") this.host.retryAt(outcome.nextAttemptAt);
    this.services.metrics?.deliveryAttempt(report.succeeded ? "succeeded" : "failed", report.durationMs);
    return {
      delivery,
      outcome,
      attempt: {
        ...this.attemptBase(delivery),
        attempt: delivery.attempt,
        status_code: report.statusCode,
        duration_ms: report.durationMs,
        error: report.error,
        succeeded: report.succeeded,
        response: report.answer ?? null,
        created_at: report.startedAt,
      },
    };
  }

  /**
   * A receiver's `Retry-After`: no send of the lane before it, held on the lane now so that it
   * holds even if this worker dies before letting the lane go.
   */
  private async holdFor(retryAfterMs: number): Promise<void> {
    this.pace.hold(this.now() + this.capped(retryAfterMs));
    const until = new Date(this.pace.nextAt);
    await this.services.leases.hold(this.endpoint._id, this.settings.holder, until);
  }

  /** The HTTP attempt, in a span of the write's trace when tracing is on (platform/telemetry/index.ts). */
  private attempt(batch: Batch, delivery: ClaimedDelivery, event: EventBytes): Promise<AttemptReport> {
    const { endpoint } = this;
    const span = {
      endpointId: endpoint._id,
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      attempt: delivery.attempt,
      traceparent: event.traceparent,
    };
    const request = {
      url: endpoint.url,
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      payload: event.payload,
      secrets: batch.secrets,
      headers: batch.headers,
    };
    return withDeliveryAttemptSpan(span, () =>
      attemptDelivery(this.services.http, request, this.settings.timeoutMs),
    );
  }

  private attemptBase(delivery: ClaimedDelivery) {
    return {
      workspace_id: delivery.workspace_id,
      delivery_id: delivery._id,
      endpoint_id: this.endpoint._id,
      event_id: delivery.event_id,
      event_type: delivery.event_type,
    };
  }

  /**
   * A success settles; a failure retries on schedule (no sooner than a `Retry-After` asked, within
   * the schedule's longest wait), and fails the delivery after the last attempt.
   */
  private outcomeOf(attempt: number, report: AttemptReport): DeliveryOutcome {
    const sent = { attempt, at: report.startedAt, statusCode: report.statusCode };
    if (report.succeeded) return { kind: "settled", status: "succeeded", ...sent };
    const scheduled = retryDelay(this.settings.retryDelaysMs, attempt + 1);
    if (scheduled === null) return { kind: "settled", status: "failed", ...sent };
    const wait = Math.max(scheduled, this.capped(report.retryAfterMs ?? 0));
    return { kind: "retry", ...sent, nextAttemptAt: new Date(this.now() + wait) };
  }

  /** A receiver's `Retry-After`, within the retry schedule's longest wait. */
  private capped(ms: number): number {
    return Math.min(ms, Math.max(0, ...this.settings.retryDelaysMs));
  }

  /**
   * Marks the settled outcomes the endpoint's health counts: every failure, and a success while
   * failures are to be forgotten (the common case, successes with none, writes nothing more).
   */
  private markCounted(settled: Settled[]): void {
    let failuresToForget = this.endpoint.consecutive_failures !== 0;
    for (const { outcome } of settled) {
      if (outcome.kind !== "settled") continue;
      if (outcome.status === "failed") {
        outcome.counts = true;
        failuresToForget = true;
      } else if (outcome.status === "succeeded" && failuresToForget) {
        outcome.counts = true;
        failuresToForget = false;
      }
    }
  }

  /** Records the batch's outcomes and attempts (with those of the interrupted claims before it). */
  private async record(deliveries: ClaimedDelivery[], settled: Settled[]): Promise<void> {
    const at = new Date(this.now());
    const interrupted = deliveries
      .filter((d) => d.interrupted)
      .map((d) => ({
        ...this.attemptBase(d),
        attempt: d.attempt - 1,
        status_code: null,
        duration_ms: 0,
        error: INTERRUPTED_ATTEMPT,
        succeeded: false,
        created_at: at,
      }));
    const attempts = [...interrupted, ...settled.flatMap((s) => (s.attempt ? [s.attempt] : []))];
    const outcomes = settled.map((s) => ({
      id: s.delivery._id,
      holder: s.delivery.holder,
      outcome: s.outcome,
    }));
    const applied = await this.services.record({ outcomes, attempts });
    if (applied !== outcomes.length) {
      this.services.logger.warn(
        { endpointId: this.endpoint._id, outcomes: outcomes.length, applied },
        "deliveries taken over by another worker while this one sent them; their outcomes are not recorded",
      );
    }
  }

  /**
   * Counts finished deliveries (metrics) and, once each, the outcomes the endpoint's health counts
   * (health-count.ts: only those this batch's writes settled and nobody counted yet); false when a
   * failure disabled the endpoint (its pending deliveries are then dropped).
   */
  private async countOutcomes(settled: Settled[]): Promise<boolean> {
    const { store, metrics } = this.services;
    const counted: string[] = [];
    for (const { delivery, outcome } of settled) {
      if (outcome.kind !== "settled") continue;
      metrics?.deliveryFinished(outcome.status);
      if (outcome.counts) counted.push(delivery._id);
    }
    if (counted.length === 0) return true;
    const pending = await store.webhookDeliveries.healthPending(counted);
    const disabled = await countHealth(this.services, pending, [this.endpoint]);
    if (!disabled.has(this.endpoint._id)) return true;
    await this.dropPending();
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
