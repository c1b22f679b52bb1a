import type { Job } from "agenda";
import type { Dispatcher } from "undici";
import type { DeliveryAttemptInput } from "../db/delivery-attempts.js";
import type { AttemptClaim, DeliveryJobData } from "../db/delivery-jobs.js";
import type { Store } from "../db/store.js";
import type { DeliveryProgress, DeliveryStatus } from "../db/webhook-deliveries.js";
import { signingSecrets, type WebhookEndpointDoc } from "../db/webhook-endpoints.js";
import type { StoredEvent } from "../domain/events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics/metrics.js";
import { type AttemptReport, attemptDelivery } from "./attempt.js";
import { retryDelay } from "./retry-schedule.js";

/**
 * The delivery job's body: one run is one attempt of one delivery (an event to an endpoint).
 * It claims the attempt number, sends, records the attempt and the delivery's progress, then
 * either schedules the retry (the job's next run) or settles the delivery (`succeeded`, `failed`,
 * or `dropped` when its endpoint is disabled or gone) and the endpoint's consecutive failures.
 */

export type { DeliveryJobData };

/** The parts of the event an attempt sends: from the job, or from `events` for older jobs. */
async function eventOf(
  store: Store,
  data: DeliveryJobData,
): Promise<Pick<StoredEvent, "workspace_id" | "type" | "payload"> | null> {
  if (data.event_type !== undefined && data.payload !== undefined) {
    return { workspace_id: data.workspace_id, type: data.event_type, payload: data.payload };
  }
  return store.events.collection.findOne({ _id: data.event_id });
}

export interface DeliverDeps {
  store: Store;
  /**
   * The endpoint read and the attempt record of every attempt: the store's, gathered across the
   * process's concurrent deliveries (delivery/gather.ts), each still fresh to its caller.
   */
  findEndpoint: (id: string) => Promise<WebhookEndpointDoc | null>;
  recordAttempt: (attempt: DeliveryAttemptInput) => Promise<boolean>;
  /** A delivery's status and attempts (null when it is gone), and its progress written: gathered too. */
  findDelivery: (id: string) => Promise<{ status: DeliveryStatus; attempts: number } | null>;
  recordProgress: (update: { id: string; progress: DeliveryProgress }) => Promise<void>;
  /** The attempt claim of every attempt (db/delivery-jobs.ts `claimAttempts`), gathered. */
  claimAttempt: (claim: AttemptClaim) => Promise<{ attempt: number; lockedAt: Date } | null>;
  dispatcher: Dispatcher;
  logger: Logger;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /** Called when a failure disabled the endpoint: its pending deliveries stop. */
  onEndpointDisabled: (endpointId: string) => Promise<void>;
  /** Called around the HTTP attempt, for the per-endpoint share of the concurrency. */
  inFlight: { enter(endpointId: string): void; leave(endpointId: string): void };
  /** Counts attempts and finished deliveries for `/metrics`. */
  metrics?: DeliveryMetrics;
}

/** The part of the server's metrics that delivery feeds. */
export type DeliveryMetrics = Pick<Metrics, "deliveryAttempt" | "deliveryFinished">;

/** An interrupted attempt: its worker died (or lost its lock) before recording the outcome. */
const INTERRUPTED = "interrupted: the worker stopped before the outcome was recorded";

/**
 * Claims the next attempt number of this job, fenced by the lock this worker took (see
 * db/delivery-jobs.ts `claimAttempts`). Returns the number, or null.
 */
async function claimAttempt(deps: DeliverDeps, job: Job<DeliveryJobData>): Promise<number | null> {
  const { lockedAt, lastModifiedBy: owner } = job.attrs;
  if (!lockedAt || !owner) return null;
  const claimed = await deps.claimAttempt({
    id: String(job.attrs._id),
    lockedAt,
    owner,
    attempt: job.attrs.data.attempt ?? 0,
  });
  if (!claimed) return null;
  job.attrs.lockedAt = claimed.lockedAt;
  job.attrs.data.attempt = claimed.attempt;
  return claimed.attempt;
}

/**
 * Was this delivery made by an earlier job? A job is removed when its delivery settles, and a job
 * may be inserted again afterwards (a relay running its hooks again, the intent sweep racing a
 * slow request, see delivery/queue.ts): it starts counting at 1, so its first attempt checks the
 * delivery is still pending and unattempted. Jobs made before deliveries were recorded check the
 * attempts log instead, when their relay ran again.
 */
async function madeAlready(deps: DeliverDeps, data: DeliveryJobData): Promise<boolean> {
  if (data.delivery_id) {
    const delivery = await deps.findDelivery(data.delivery_id);
    return delivery?.status !== "pending" || delivery.attempts > 0;
  }
  return data.recheck ? deps.store.deliveryAttempts.exists(data.event_id, data.endpoint_id, 1) : false;
}

export async function deliver(deps: DeliverDeps, job: Job<DeliveryJobData>): Promise<void> {
  const { store, logger } = deps;
  const { event_id: eventId, endpoint_id: endpointId } = job.attrs.data;
  const attempt = await claimAttempt(deps, job);
  if (attempt === null) {
    logger.warn(
      { eventId, endpointId },
      "delivery job taken over by another worker, or removed; not sending",
    );
    return;
  }
  const deliveryId = job.attrs.data.delivery_id;
  const [event, endpoint, madeBefore] = await Promise.all([
    eventOf(store, job.attrs.data),
    deps.findEndpoint(endpointId),
    attempt === 1 ? madeAlready(deps, job.attrs.data) : false,
  ]);
  if (madeBefore) {
    logger.info(
      { eventId, endpointId, deliveryId },
      "delivery already made by an earlier job; not sending again",
    );
    return;
  }
  // The delivery record follows the attempts log; if writing it fails (the database went away
  // after the attempt), the attempt stands and the record lags rather than the event being sent again.
  const progress = async (update: DeliveryProgress) => {
    if (!deliveryId) return;
    try {
      await deps.recordProgress({ id: deliveryId, progress: update });
    } catch (err) {
      logger.warn({ err, deliveryId }, "could not record the delivery's progress");
    }
  };
  // Deleted or disabled (by its owner or by failures) while the delivery was due: it stops here.
  if (!event || !endpoint || endpoint.status !== "enabled") {
    await progress({ kind: "settled", status: "dropped", at: new Date() });
    deps.metrics?.deliveryFinished("dropped");
    return;
  }

  const base = {
    workspace_id: event.workspace_id,
    ...(deliveryId ? { delivery_id: deliveryId } : {}),
    endpoint_id: endpointId,
    event_id: eventId,
    event_type: event.type,
  };
  if (attempt > 1 && !(await store.deliveryAttempts.exists(eventId, endpointId, attempt - 1))) {
    await deps.recordAttempt({
      ...base,
      attempt: attempt - 1,
      status_code: null,
      duration_ms: 0,
      error: INTERRUPTED,
      succeeded: false,
      created_at: new Date(),
    });
  }
  const lastAttempt = 1 + deps.retryDelaysMs.length;
  let report: AttemptReport | undefined;
  if (attempt <= lastAttempt) {
    deps.inFlight.enter(endpointId);
    try {
      report = await attemptDelivery(
        deps.dispatcher,
        {
          url: endpoint.url,
          eventId,
          eventType: event.type,
          payload: event.payload,
          secrets: signingSecrets(endpoint),
        },
        deps.timeoutMs,
      );
    } finally {
      deps.inFlight.leave(endpointId);
    }
    await deps.recordAttempt({
      ...base,
      attempt,
      status_code: report.statusCode,
      duration_ms: report.durationMs,
      error: report.error,
      succeeded: report.succeeded,
      created_at: report.startedAt,
    });
    deps.metrics?.deliveryAttempt(report.succeeded ? "succeeded" : "failed", report.durationMs);
    const sent = { attempt, at: report.startedAt, statusCode: report.statusCode };
    if (report.succeeded) {
      await progress({ kind: "settled", status: "succeeded", ...sent });
      deps.metrics?.deliveryFinished("succeeded");
      // The common case (no failures to forget) costs no write; a concurrent failure that the
      // read missed is reset by the next success.
      if (endpoint.consecutive_failures !== 0) await store.webhookEndpoints.deliverySucceeded(endpointId);
      return;
    }
    const wait = retryDelay(deps.retryDelaysMs, attempt + 1);
    if (wait !== null) {
      // Job.run saves nextRunAt after this returns: the job's next run is the retry.
      job.attrs.nextRunAt = new Date(Date.now() + wait);
      await progress({ kind: "retry", ...sent, nextAttemptAt: job.attrs.nextRunAt });
      return;
    }
    await progress({ kind: "settled", status: "failed", ...sent });
  } else {
    await progress({ kind: "settled", status: "failed", at: new Date() });
  }
  // The last attempt failed (or crashes used up the attempts): the delivery failed.
  logger.info({ eventId, endpointId, attempts: attempt, error: report?.error }, "webhook delivery failed");
  deps.metrics?.deliveryFinished("failed");
  if (await store.webhookEndpoints.deliveryFailed(endpointId)) {
    logger.warn({ endpointId }, "webhook endpoint disabled after consecutive failed deliveries");
    await deps.onEndpointDisabled(endpointId);
  }
}
