import pLimit from "p-limit";
import type { Dispatcher } from "undici";
import type { Logger } from "../../platform/logger.js";
import type { Metrics } from "../../platform/metrics/metrics.js";
import { withDeliveryAttemptSpan } from "../../platform/telemetry/index.js";
import type { DeliveryAttemptInput } from "../attempts.js";
import type { ClaimedDelivery, DeliveryOutcome } from "../deliveries.js";
import { customHeaders, signingSecrets, type WebhookEndpointDoc } from "../endpoints.js";
import type { WebhookStores as Store } from "../stores.js";
import { type AttemptReport, attemptDelivery } from "./attempt.js";
import type { EventBytes } from "./recent-events.js";
import { retryDelay } from "./retry-schedule.js";

/**
 * One run of an endpoint's lane (webhooks/delivery/lanes.ts): while the endpoint has due deliveries, claim
 * a batch of them (one fenced update), send them at most `perEndpoint` at a time, and record the
 * outcomes (one bulk write, and the attempts log beside it); then say when the lane has work next.
 * A run yields after `sliceMs` so that one endpoint's backlog cannot keep a slot from the others.
 * Rules kept here: a delivery fails when its last attempt fails (1 + the retry delays), each
 * failed delivery counts toward the endpoint's 15 consecutive failures, a success resets them, and
 * an endpoint disabled, paused or deleted drops its pending deliveries.
 */

/** The part of the server's metrics that delivery feeds. */
export type DeliveryMetrics = Pick<Metrics, "deliveryAttempt" | "deliveryFinished">;

export interface LaneDeps {
  store: Store;
  dispatcher: Dispatcher;
  logger: Logger;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /** Attempts in flight at once for one endpoint (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
  /** Deliveries claimed per batch. */
  batchSize: number;
  /** How long a claim holds its deliveries: past it, another worker may take them over. */
  leaseMs: number;
  /** How long a run may go on before it yields its slot. */
  sliceMs: number;
  /** The bytes of these events (those past retention are missing). */
  readEvents: (ids: string[]) => Promise<EventBytes[]>;
  /** Keeps the run's Agenda lock fresh (Agenda's `touch`), called between batches. */
  keepAlive: () => Promise<void>;
  /**
   * After a short batch: waits a moment (not past `until`, epoch ms) for more of the endpoint's
   * deliveries to come due; true when some may have (webhooks/delivery/running-lanes.ts).
   */
  linger: (until: number) => Promise<boolean>;
  /** True once the process is stopping: the run ends after its batch and hands the lane on. */
  stopping: () => boolean;
  metrics?: DeliveryMetrics;
}

/** An interrupted attempt: its worker died (or lost its lease) before recording the outcome. */
const INTERRUPTED = "interrupted: the worker stopped before the outcome was recorded";

/** Runs the lane; returns when it has work next (now, after a yield), or null for none. */
export async function runLane(deps: LaneDeps, endpointId: string): Promise<Date | null> {
  const started = Date.now();
  let touched = started;
  for (;;) {
    const endpoint = await deps.store.webhookEndpoints.find(endpointId);
    if (endpoint?.status !== "enabled") {
      await dropPending(deps, endpointId);
      return null;
    }
    // Once per endpoint and batch: the secrets valid now. Before the claim, so a secret this
    // process cannot open (a key it lacks, SecretKeyError) fails the run without using an attempt.
    const secrets = signingSecrets(endpoint);
    const batch = await deps.store.webhookDeliveries.claim(endpointId, deps.batchSize, deps.leaseMs);
    const yieldAt = started + deps.sliceMs;
    if (batch.length === 0) {
      if (!deps.stopping() && (await deps.linger(yieldAt))) continue;
      return deps.store.webhookDeliveries.nextDue(endpointId);
    }
    const stillEnabled = await sendBatch(deps, endpoint, secrets, batch);
    if (!stillEnabled) return null;
    if (deps.stopping() || Date.now() >= yieldAt) return new Date();
    if (batch.length < deps.batchSize) {
      // A short batch took every delivery due at its claim: wait a moment for more, then ask
      // when the next one is due rather than claim again for nothing.
      if (await deps.linger(yieldAt)) continue;
      const next = await deps.store.webhookDeliveries.nextDue(endpointId);
      if (!next || next.getTime() > Date.now()) return next;
    }
    if (Date.now() - touched >= deps.leaseMs / 4) {
      touched = Date.now();
      await deps.keepAlive();
    }
  }
}

async function dropPending(deps: LaneDeps, endpointId: string): Promise<void> {
  const dropped = await deps.store.webhookDeliveries.dropPending(endpointId);
  for (let i = 0; i < dropped; i++) deps.metrics?.deliveryFinished("dropped");
}

type Settled = { delivery: ClaimedDelivery; outcome: DeliveryOutcome; attempt?: DeliveryAttemptInput };

/** Sends one claimed batch and records it; false when a failure disabled the endpoint. */
async function sendBatch(
  deps: LaneDeps,
  endpoint: WebhookEndpointDoc,
  secrets: string[],
  batch: ClaimedDelivery[],
): Promise<boolean> {
  const { store } = deps;
  const events = await deps.readEvents([...new Set(batch.map((d) => d.event_id))]);
  const eventOf = new Map(events.map((event) => [event._id, event]));
  const lastAttempt = 1 + deps.retryDelaysMs.length;
  const interrupted: DeliveryAttemptInput[] = batch
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
  const limit = pLimit(deps.perEndpoint);
  // In the order they finish: the endpoint's failure count follows the outcomes as they happened.
  const settled: Settled[] = [];
  await Promise.all(
    batch.map((delivery) =>
      limit(async () => {
        const event = eventOf.get(delivery.event_id);
        const at = new Date();
        if (event === undefined) {
          // Its event is past retention: nothing left to send.
          settled.push({
            delivery,
            outcome: { kind: "settled", status: "dropped", attempt: delivery.attempt, at, statusCode: null },
          });
          return;
        }
        if (delivery.attempt > lastAttempt) {
          // Crashes used up the attempts.
          settled.push({
            delivery,
            outcome: { kind: "settled", status: "failed", attempt: delivery.attempt, at, statusCode: null },
          });
          return;
        }
        // A span of the write's trace when tracing is on (platform/telemetry/index.ts).
        const report = await withDeliveryAttemptSpan(
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
                secrets,
                headers: customHeaders(endpoint),
              },
              deps.timeoutMs,
            ),
        );
        settled.push({
          delivery,
          outcome: outcomeOf(deps, delivery.attempt, report),
          attempt: {
            ...attemptBase(delivery, endpoint),
            attempt: delivery.attempt,
            status_code: report.statusCode,
            duration_ms: report.durationMs,
            error: report.error,
            succeeded: report.succeeded,
            created_at: report.startedAt,
          },
        });
        deps.metrics?.deliveryAttempt(report.succeeded ? "succeeded" : "failed", report.durationMs);
      }),
    ),
  );
  const attempts = [...interrupted, ...settled.flatMap((s) => (s.attempt ? [s.attempt] : []))];
  const [, applied] = await Promise.all([
    attempts.length > 0 ? store.deliveryAttempts.recordMany(attempts) : undefined,
    store.webhookDeliveries.recordOutcomes(settled.map((s) => ({ id: s.delivery._id, outcome: s.outcome }))),
  ]);
  if (applied < settled.length) {
    deps.logger.warn(
      { endpointId: endpoint._id, taken: settled.length - applied },
      "deliveries taken over by another worker while this one sent them; their outcomes are not recorded",
    );
  }
  return countOutcomes(deps, endpoint, settled);
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

/** A success settles; a failure retries on schedule, and fails the delivery after the last attempt. */
function outcomeOf(deps: LaneDeps, attempt: number, report: AttemptReport): DeliveryOutcome {
  const sent = { attempt, at: report.startedAt, statusCode: report.statusCode };
  if (report.succeeded) return { kind: "settled", status: "succeeded", ...sent };
  const wait = retryDelay(deps.retryDelaysMs, attempt + 1);
  if (wait === null) return { kind: "settled", status: "failed", ...sent };
  return { kind: "retry", ...sent, nextAttemptAt: new Date(Date.now() + wait) };
}

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
