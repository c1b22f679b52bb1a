import pLimit from "p-limit";
import type { Dispatcher as HttpDispatcher } from "undici";
import type { Clock } from "../../platform/clock.js";
import type { Logger } from "../../platform/logger.js";
import type { Metrics } from "../../platform/metrics/metrics.js";
import { withDeliveryAttemptSpan } from "../../platform/telemetry/index.js";
import { type DeliveryAttemptInput, INTERRUPTED_ATTEMPT } from "../attempts.js";
import type { ClaimedDelivery, DeliveryOutcome } from "../deliveries.js";
import type { WebhookEndpointDoc } from "../endpoints.js";
import type { WebhookStores as Store } from "../stores.js";
import { type AttemptReport, attemptDelivery } from "./attempt.js";
import type { LaneStart } from "./dispatcher.js";
import { countHealth } from "./health-count.js";
import { HeldLease, type LaneLeases } from "./lane-leases.js";
import { Pace } from "./pace.js";
import type { EventBytes } from "./recent-events.js";
import type { Recorder } from "./recorder.js";
import { retryDelay } from "./retry-schedule.js";

/**
 * One run of an endpoint's lane (webhooks/delivery/dispatcher.ts starts it holding the endpoint's
 * lease, webhooks/delivery/lane-leases.ts): send the batch claimed for it, at most `perEndpoint` at a
 * time and at the endpoint's pace (its `rate_limit`, a receiver's `Retry-After`), record the
 * outcomes (one bulk write, and the attempts log beside it), then renew the lease, claim the next
 * batch and go on while deliveries are due; let the lane go at the end. A run yields after
 * `sliceMs` when other endpoints wait for a slot, so one endpoint's backlog cannot keep a slot
 * from the others. Rules kept here: a delivery fails when its last attempt fails (1 + the retry
 * delays), each failed delivery counts toward the endpoint's 15 consecutive failures, a success
 * resets them (webhooks/delivery/health-count.ts), and an endpoint disabled, paused or deleted
 * drops its pending deliveries. A run sends and claims only while its lease has room for an
 * attempt (lane-leases.ts `HeldLease`); what it claimed and could not send it gives back.
 */

/** The part of the server's metrics that delivery feeds. */
export type DeliveryMetrics = Pick<Metrics, "deliveryAttempt" | "deliveryFinished">;

export interface LaneDeps {
  store: Store;
  leases: LaneLeases;
  /** The database's time (due times, leases, retries). */
  clock: Clock;
  /** This worker's name in the leases it holds. */
  holder: string;
  /** Where attempts go out: no attempt waits for a socket (webhooks/delivery/http-client.ts). */
  http: HttpDispatcher;
  logger: Logger;
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
  /** Records a batch's outcomes and attempts, gathered with other lanes' (webhooks/delivery/recorder.ts). */
  record: Recorder;
  /** The bytes of these events (those past retention are missing). */
  readEvents: (ids: string[]) => Promise<EventBytes[]>;
  /**
   * After a short batch: waits a moment (not past `until`, epoch ms) for more of the endpoint's
   * deliveries to come due; true when some may have (webhooks/delivery/running-lanes.ts).
   */
  linger: (until: number) => Promise<boolean>;
  /** True while other endpoints wait for one of this process's lane slots. */
  crowded: () => boolean;
  /** True once the process is stopping: the run ends after its batch and lets the lane go. */
  stopping: () => boolean;
  /** A retry of this lane's was scheduled for `at` (the dispatcher looks again then). */
  retryAt: (at: Date) => void;
  metrics?: DeliveryMetrics;
}

/** A paced lane waits this long at most for its next send before it lets its slot go. */
const MAX_REST_MS = 1_000;

/**
 * Runs the lane from its first claimed batch until it has nothing due, then lets it go. When the
 * round's read saw no more of the endpoint's deliveries than the first batch (`start.more`), the
 * lane ends after it (having lingered, where it may), and whatever else is due is found by the
 * round its end asks for.
 */
export async function runLane(deps: LaneDeps, start: LaneStart): Promise<void> {
  let endpoint = start.endpoint;
  const lease = new HeldLease(start.leasedAt, deps.leaseMs, deps.timeoutMs + deps.marginMs);
  const pace = new Pace(endpoint.rate_limit ?? null, deps.clock.now());
  const yieldAt = deps.clock.now() + deps.sliceMs;
  let batch = start.first;
  try {
    for (;;) {
      if (batch.length > 0) {
        const events = batch === start.first ? start.events : undefined;
        if (!(await sendBatch(deps, endpoint, batch, { pace, lease }, events))) return;
        if (deps.stopping() || (deps.clock.now() >= yieldAt && deps.crowded())) return;
        if (pace.nextAt - deps.clock.now() > MAX_REST_MS) return;
        if (!start.more && batch === start.first && !(await deps.linger(yieldAt))) return;
      }
      const renewedAt = performance.now();
      const renewed = await deps.leases.renew(endpoint._id, deps.holder, deps.leaseMs, now(deps));
      if (renewed?.status !== "enabled") {
        // Disabled, paused or deleted meanwhile (or the lease was lost: then nothing to drop).
        if (renewed || !(await deps.store.webhookEndpoints.find(endpoint._id)))
          await dropPending(deps, endpoint._id);
        return;
      }
      lease.renewed(renewedAt);
      endpoint = renewed;
      pace.setRate(endpoint.rate_limit ?? null);
      // A renew that came back late (a pause, a slow database) leaves no room to claim.
      if (!lease.hasRoom()) return;
      const limit = pace.fits(MAX_REST_MS, deps.perEndpoint);
      batch = await deps.store.webhookDeliveries.claim(endpoint._id, limit, deps.leaseMs, now(deps));
      if (batch.length === 0 && (deps.stopping() || !(await deps.linger(yieldAt)))) return;
    }
  } finally {
    await deps.leases.release(endpoint._id, deps.holder, new Date(Math.max(deps.clock.now(), pace.nextAt)));
  }
}

const now = (deps: LaneDeps) => new Date(deps.clock.now());

async function dropPending(deps: LaneDeps, endpointId: string): Promise<void> {
  const dropped = await deps.store.webhookDeliveries.dropPending(endpointId);
  for (let i = 0; i < dropped; i++) deps.metrics?.deliveryFinished("dropped");
}

type Settled = { delivery: ClaimedDelivery; outcome: DeliveryOutcome; attempt?: DeliveryAttemptInput };
/** A claimed delivery that was not sent: the lease had no room left for it. */
type Unsent = { delivery: ClaimedDelivery; unsent: true };

/** How a run may send: at the endpoint's pace, within its lease. */
interface Pacing {
  pace: Pace;
  lease: HeldLease;
}

/** What every delivery of one batch is sent with. */
interface BatchContext extends Pacing {
  deps: LaneDeps;
  endpoint: WebhookEndpointDoc;
  secrets: string[];
  /** The endpoint's custom headers, opened once per batch as the secrets are. */
  headers: Record<string, string>;
  eventOf: Map<string, EventBytes>;
}

/**
 * Sends one claimed batch and records it; false when the run must end: a failure disabled the
 * endpoint, or the lease ran short and some of the batch went back unsent.
 */
async function sendBatch(
  deps: LaneDeps,
  endpoint: WebhookEndpointDoc,
  batch: ClaimedDelivery[],
  pacing: Pacing,
  /** The events of the batch, when read already (the dispatcher's round reads the first batch's). */
  known?: Promise<EventBytes[]>,
): Promise<boolean> {
  // Once per batch: the secrets and header values valid now. One this process cannot open (a
  // key it lacks, SecretKeyError) fails the run; the claimed attempts come back when their lease ends.
  const secrets = deps.store.secrets.signingSecrets(endpoint);
  const headers = deps.store.secrets.customHeaders(endpoint);
  const events = await (known ?? deps.readEvents([...new Set(batch.map((d) => d.event_id))]));
  const eventOf = new Map(events.map((e) => [e._id, e]));
  const context: BatchContext = { deps, endpoint, secrets, headers, ...pacing, eventOf };
  const limit = pLimit(deps.perEndpoint);
  // In the order they finish: the endpoint's failure count follows the outcomes as they happened.
  const settled: Settled[] = [];
  const unsent: ClaimedDelivery[] = [];
  await Promise.all(
    batch.map((delivery) =>
      limit(async () => {
        const done = await sendOne(context, delivery);
        if ("unsent" in done) unsent.push(done.delivery);
        else settled.push(done);
      }),
    ),
  );
  await deps.store.webhookDeliveries.unclaim(unsent);
  markCounted(endpoint, settled);
  await record(deps, endpoint, batch, settled);
  return (await countOutcomes(deps, endpoint, settled)) && unsent.length === 0;
}

/**
 * Marks the settled outcomes the endpoint's health counts: every failure, and a success while
 * failures are to be forgotten (the common case, successes with none, writes nothing more).
 */
function markCounted(endpoint: WebhookEndpointDoc, settled: Settled[]): void {
  let failuresToForget = endpoint.consecutive_failures !== 0;
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
async function record(
  deps: LaneDeps,
  endpoint: WebhookEndpointDoc,
  batch: ClaimedDelivery[],
  settled: Settled[],
): Promise<void> {
  const attempts = [
    ...interruptedAttempts(batch, endpoint, now(deps)),
    ...settled.flatMap((s) => (s.attempt ? [s.attempt] : [])),
  ];
  const outcomes = settled.map((s) => ({
    id: s.delivery._id,
    holder: s.delivery.holder,
    outcome: s.outcome,
  }));
  const applied = await deps.record({ outcomes, attempts });
  if (applied !== outcomes.length) {
    deps.logger.warn(
      { endpointId: endpoint._id, outcomes: outcomes.length, applied },
      "deliveries taken over by another worker while this one sent them; their outcomes are not recorded",
    );
  }
}

/** The attempts of the batch whose previous worker died before recording them. */
function interruptedAttempts(
  batch: ClaimedDelivery[],
  endpoint: WebhookEndpointDoc,
  at: Date,
): DeliveryAttemptInput[] {
  return batch
    .filter((d) => d.interrupted)
    .map((d) => ({
      ...attemptBase(d, endpoint),
      attempt: d.attempt - 1,
      status_code: null,
      duration_ms: 0,
      error: INTERRUPTED_ATTEMPT,
      succeeded: false,
      created_at: at,
    }));
}

/**
 * One delivery of the batch: settled without a send when nothing can be sent, given back when
 * the lease has no room for it, else one attempt at its pace.
 */
async function sendOne(context: BatchContext, delivery: ClaimedDelivery): Promise<Settled | Unsent> {
  const { deps, endpoint, pace, lease } = context;
  const event = context.eventOf.get(delivery.event_id);
  const unsent = { attempt: delivery.attempt, at: now(deps), statusCode: null };
  // Its event is past retention: nothing left to send.
  if (event === undefined) return { delivery, outcome: { kind: "settled", status: "dropped", ...unsent } };
  // Crashes used up the attempts.
  if (delivery.attempt > 1 + deps.retryDelaysMs.length) {
    return { delivery, outcome: { kind: "settled", status: "failed", ...unsent } };
  }
  const wait = pace.book(deps.clock.now()) - deps.clock.now();
  if (wait > 0) await sleep(wait);
  // The last look before the send: a pause (or a slow batch) may have eaten the lease.
  if (!lease.hasRoom()) return { delivery, unsent: true };
  pace.started(deps.clock.now());
  const report = await attempt(context, delivery, event);
  const outcome = outcomeOf(deps, delivery.attempt, report);
  if (report.retryAfterMs !== undefined) {
    pace.hold(deps.clock.now() + capped(deps, report.retryAfterMs));
    // Written now, so that it holds even if this worker dies before letting the lane go.
    await deps.leases.hold(endpoint._id, deps.holder, new Date(pace.nextAt));
  }
  if (outcome.kind === "retry") deps.retryAt(outcome.nextAttemptAt);
  deps.metrics?.deliveryAttempt(report.succeeded ? "succeeded" : "failed", report.durationMs);
  return {
    delivery,
    outcome,
    attempt: {
      ...attemptBase(delivery, endpoint),
      attempt: delivery.attempt,
      status_code: report.statusCode,
      duration_ms: report.durationMs,
      error: report.error,
      succeeded: report.succeeded,
      created_at: report.startedAt,
    },
  };
}

/** The HTTP attempt, in a span of the write's trace when tracing is on (platform/telemetry/index.ts). */
function attempt(
  context: BatchContext,
  delivery: ClaimedDelivery,
  event: EventBytes,
): Promise<AttemptReport> {
  const { deps, endpoint } = context;
  return withDeliveryAttemptSpan(
    {
      endpointId: endpoint._id,
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      attempt: delivery.attempt,
      traceparent: event.traceparent,
    },
    () =>
      attemptDelivery(
        deps.http,
        {
          url: endpoint.url,
          eventId: delivery.event_id,
          eventType: delivery.event_type,
          payload: event.payload,
          secrets: context.secrets,
          headers: context.headers,
        },
        deps.timeoutMs,
      ),
  );
}

function attemptBase(delivery: ClaimedDelivery, endpoint: WebhookEndpointDoc) {
  return {
    workspace_id: delivery.workspace_id,
    delivery_id: delivery._id,
    endpoint_id: endpoint._id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
  };
}

/**
 * A success settles; a failure retries on schedule (no sooner than a `Retry-After` asked, within
 * the schedule's longest wait), and fails the delivery after the last attempt.
 */
function outcomeOf(deps: LaneDeps, attempt: number, report: AttemptReport): DeliveryOutcome {
  const sent = { attempt, at: report.startedAt, statusCode: report.statusCode };
  if (report.succeeded) return { kind: "settled", status: "succeeded", ...sent };
  const scheduled = retryDelay(deps.retryDelaysMs, attempt + 1);
  if (scheduled === null) return { kind: "settled", status: "failed", ...sent };
  const wait = Math.max(scheduled, capped(deps, report.retryAfterMs ?? 0));
  return { kind: "retry", ...sent, nextAttemptAt: new Date(deps.clock.now() + wait) };
}

/** A receiver's `Retry-After`, within the retry schedule's longest wait. */
const capped = (deps: LaneDeps, ms: number) => Math.min(ms, Math.max(0, ...deps.retryDelaysMs));

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Counts finished deliveries (metrics) and, once each, the outcomes the endpoint's health counts
 * (health-count.ts: only those this batch's writes settled and nobody counted yet); false when a
 * failure disabled the endpoint (its pending deliveries are then dropped).
 */
async function countOutcomes(
  deps: LaneDeps,
  endpoint: WebhookEndpointDoc,
  settled: Settled[],
): Promise<boolean> {
  const counted: string[] = [];
  for (const { delivery, outcome } of settled) {
    if (outcome.kind !== "settled") continue;
    deps.metrics?.deliveryFinished(outcome.status);
    if (outcome.counts) counted.push(delivery._id);
  }
  if (counted.length === 0) return true;
  const pending = await deps.store.webhookDeliveries.healthPending(counted);
  const disabled = await countHealth(deps, pending, [endpoint]);
  if (!disabled.has(endpoint._id)) return true;
  await dropPending(deps, endpoint._id);
  return false;
}
