import pLimit from "p-limit";
import type { Dispatcher } from "undici";
import type { Logger } from "../../platform/logger.js";
import type { Metrics } from "../../platform/metrics/metrics.js";
import { withDeliveryAttemptSpan } from "../../platform/telemetry/index.js";
import type { DeliveryAttemptInput } from "../deliveries/attempts.js";
import type { ClaimedDelivery, DeliveryOutcome } from "../deliveries/store.js";
import type { WebhookEndpointDoc } from "../endpoints/store.js";
import type { WebhookStores as Store } from "../stores.js";
import { type AttemptReport, attemptDelivery } from "./attempt.js";
import type { LaneLeases } from "./lane-leases.js";
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
 * resets them, and an endpoint disabled, paused or deleted drops its pending deliveries.
 */

/** The part of the server's metrics that delivery feeds. */
export type DeliveryMetrics = Pick<Metrics, "deliveryAttempt" | "deliveryFinished">;

export interface LaneDeps {
  store: Store;
  leases: LaneLeases;
  /** This worker's name in the leases it holds. */
  holder: string;
  /** Where attempts go out: no attempt waits for a socket (webhooks/delivery/http-client.ts). */
  dispatcher: Dispatcher;
  logger: Logger;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /** Attempts in flight at once for one endpoint (WEBHOOK_ENDPOINT_CONCURRENCY), and a batch's size. */
  perEndpoint: number;
  /** How long a lease holds the lane and a claim its deliveries: past it, another worker may take them. */
  leaseMs: number;
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

/** An interrupted attempt: its worker died (or lost its lease) before recording the outcome. */
const INTERRUPTED = "interrupted: the worker stopped before the outcome was recorded";

/** A paced lane waits this long at most for its next send before it lets its slot go. */
const MAX_REST_MS = 1_000;

/**
 * Runs the lane from its first claimed batch until it has nothing due, then lets it go. `more`:
 * whether the dispatcher's read saw more of the endpoint's due deliveries than the first batch;
 * `firstEvents`: that batch's events, as the round read them.
 * When not, the lane ends after it (having lingered, where it may), and whatever else is due is
 * found by the round its end asks for.
 */
export async function runLane(
  deps: LaneDeps,
  leased: WebhookEndpointDoc,
  first: ClaimedDelivery[],
  more = true,
  firstEvents?: Promise<EventBytes[]>,
): Promise<void> {
  let endpoint = leased;
  const pace = new Pace(endpoint.rate_limit ?? null, Date.now());
  const yieldAt = Date.now() + deps.sliceMs;
  let batch = first;
  try {
    for (;;) {
      if (batch.length > 0) {
        const events = batch === first ? firstEvents : undefined;
        if (!(await sendBatch(deps, endpoint, batch, pace, events))) return;
        if (deps.stopping() || (Date.now() >= yieldAt && deps.crowded())) return;
        if (pace.nextAt - Date.now() > MAX_REST_MS) return;
        if (!more && batch === first && !(await deps.linger(yieldAt))) return;
      }
      const renewed = await deps.leases.renew(endpoint._id, deps.holder, deps.leaseMs);
      if (renewed?.status !== "enabled") {
        // Disabled, paused or deleted meanwhile (or the lease was lost: then nothing to drop).
        if (renewed || !(await deps.store.webhookEndpoints.find(endpoint._id)))
          await dropPending(deps, endpoint._id);
        return;
      }
      endpoint = renewed;
      pace.setRate(endpoint.rate_limit ?? null);
      const limit = pace.fits(MAX_REST_MS, deps.perEndpoint);
      batch = await deps.store.webhookDeliveries.claim(endpoint._id, limit, deps.leaseMs);
      if (batch.length === 0 && (deps.stopping() || !(await deps.linger(yieldAt)))) return;
    }
  } finally {
    await deps.leases.release(endpoint._id, deps.holder, new Date(Math.max(Date.now(), pace.nextAt)));
  }
}

async function dropPending(deps: LaneDeps, endpointId: string): Promise<void> {
  const dropped = await deps.store.webhookDeliveries.dropPending(endpointId);
  for (let i = 0; i < dropped; i++) deps.metrics?.deliveryFinished("dropped");
}

type Settled = { delivery: ClaimedDelivery; outcome: DeliveryOutcome; attempt?: DeliveryAttemptInput };

/** What every delivery of one batch is sent with. */
interface BatchContext {
  deps: LaneDeps;
  endpoint: WebhookEndpointDoc;
  secrets: string[];
  /** The endpoint's custom headers, opened once per batch as the secrets are. */
  headers: Record<string, string>;
  pace: Pace;
  eventOf: Map<string, EventBytes>;
}

/** Sends one claimed batch and records it; false when a failure disabled the endpoint. */
async function sendBatch(
  deps: LaneDeps,
  endpoint: WebhookEndpointDoc,
  batch: ClaimedDelivery[],
  pace: Pace,
  /** The events of the batch, when read already (the dispatcher's round reads the first batch's). */
  known?: Promise<EventBytes[]>,
): Promise<boolean> {
  // Once per batch: the secrets and header values valid now. One this process cannot open (a
  // key it lacks, SecretKeyError) fails the run; the claimed attempts come back when their lease ends.
  const secrets = deps.store.secrets.signingSecrets(endpoint);
  const headers = deps.store.secrets.customHeaders(endpoint);
  const events = await (known ?? deps.readEvents([...new Set(batch.map((d) => d.event_id))]));
  const context: BatchContext = {
    deps,
    endpoint,
    secrets,
    headers,
    pace,
    eventOf: new Map(events.map((e) => [e._id, e])),
  };
  const limit = pLimit(deps.perEndpoint);
  // In the order they finish: the endpoint's failure count follows the outcomes as they happened.
  const settled: Settled[] = [];
  await Promise.all(
    batch.map((delivery) => limit(async () => void settled.push(await sendOne(context, delivery)))),
  );
  const attempts = [
    ...interruptedAttempts(batch, endpoint),
    ...settled.flatMap((s) => (s.attempt ? [s.attempt] : [])),
  ];
  const outcomes = settled.map((s) => ({ id: s.delivery._id, outcome: s.outcome }));
  const applied = await deps.record({ outcomes, attempts });
  if (applied !== outcomes.length) {
    deps.logger.warn(
      { endpointId: endpoint._id, outcomes: outcomes.length, applied },
      "deliveries taken over by another worker while this one sent them; their outcomes are not recorded",
    );
  }
  return countOutcomes(deps, endpoint, settled);
}

/** The attempts of the batch whose previous worker died before recording them. */
function interruptedAttempts(batch: ClaimedDelivery[], endpoint: WebhookEndpointDoc): DeliveryAttemptInput[] {
  return batch
    .filter((d) => d.interrupted)
    .map((d) => ({
      ...attemptBase(d, endpoint),
      attempt: d.attempt - 1,
      status_code: null,
      duration_ms: 0,
      error: INTERRUPTED,
      succeeded: false,
      created_at: new Date(),
    }));
}

/** One delivery of the batch: settled without a send when nothing can be sent, else one attempt at its pace. */
async function sendOne(context: BatchContext, delivery: ClaimedDelivery): Promise<Settled> {
  const { deps, endpoint, pace } = context;
  const event = context.eventOf.get(delivery.event_id);
  const unsent = { attempt: delivery.attempt, at: new Date(), statusCode: null };
  // Its event is past retention: nothing left to send.
  if (event === undefined) return { delivery, outcome: { kind: "settled", status: "dropped", ...unsent } };
  // Crashes used up the attempts.
  if (delivery.attempt > 1 + deps.retryDelaysMs.length) {
    return { delivery, outcome: { kind: "settled", status: "failed", ...unsent } };
  }
  const wait = pace.book(Date.now()) - Date.now();
  if (wait > 0) await sleep(wait);
  pace.started(Date.now());
  const report = await attempt(context, delivery, event);
  const outcome = outcomeOf(deps, delivery.attempt, report);
  if (report.retryAfterMs !== undefined) pace.hold(Date.now() + capped(deps, report.retryAfterMs));
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
        deps.dispatcher,
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
  return { kind: "retry", ...sent, nextAttemptAt: new Date(Date.now() + wait) };
}

/** A receiver's `Retry-After`, within the retry schedule's longest wait. */
const capped = (deps: LaneDeps, ms: number) => Math.min(ms, Math.max(0, ...deps.retryDelaysMs));

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Counts finished deliveries (metrics) and the endpoint's consecutive failures, in the order
 * the outcomes happened; false when a failure disabled the endpoint (its pending deliveries are
 * then dropped). The common case, successes with no failures to forget, writes nothing.
 */
async function countOutcomes(
  deps: LaneDeps,
  endpoint: WebhookEndpointDoc,
  settled: Settled[],
): Promise<boolean> {
  const endpoints = deps.store.webhookEndpoints;
  let failuresToForget = endpoint.consecutive_failures !== 0;
  for (const { delivery, outcome } of settled) {
    if (outcome.kind !== "settled") continue;
    deps.metrics?.deliveryFinished(outcome.status);
    if (outcome.status === "succeeded" && failuresToForget) {
      await endpoints.deliverySucceeded(endpoint);
      failuresToForget = false;
    } else if (outcome.status === "failed") {
      deps.logger.info(
        { eventId: delivery.event_id, endpointId: endpoint._id, attempts: outcome.attempt },
        "webhook delivery failed",
      );
      failuresToForget = true;
      if (await endpoints.deliveryFailed(endpoint, delivery._id)) {
        deps.logger.warn(
          { endpointId: endpoint._id },
          "webhook endpoint disabled after consecutive failed deliveries",
        );
        await dropPending(deps, endpoint._id);
        return false;
      }
    }
  }
  return true;
}
