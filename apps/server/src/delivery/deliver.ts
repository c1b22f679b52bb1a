import type { Job } from "agenda";
import { type Collection, ObjectId } from "mongodb";
import type { Dispatcher } from "undici";
import type { DeliveryAttemptInput } from "../db/delivery-attempts.js";
import type { Store } from "../db/store.js";
import { signingSecrets, type WebhookEndpointDoc } from "../db/webhook-endpoints.js";
import type { EventType, StoredEvent } from "../domain/events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics/metrics.js";
import { type AttemptReport, attemptDelivery } from "./attempt.js";
import { retryDelay } from "./retry-schedule.js";

/**
 * The delivery job's body: one run is one attempt of one delivery (an event to an endpoint).
 * It claims the attempt number, sends, records the attempt, then either schedules the retry
 * (the job's next run) or settles the delivery on the endpoint's consecutive failures.
 */

/** What a delivery job carries; `attempt` counts the attempts claimed so far. */
export interface DeliveryJobData {
  event_id: string;
  endpoint_id: string;
  workspace_id: string;
  attempt: number;
  /**
   * The event's type and stored JSON, copied when the job is made, so an attempt reads no event
   * (the lock query already returns the job). Events never change; jobs made before these fields
   * existed have neither and read the event.
   */
  event_type?: EventType;
  payload?: string;
  /**
   * Made by a relay that ran again (the event was recorded before): the delivery may have been
   * made by an earlier job, which finished and was removed, so the first attempt checks the
   * attempts log before it sends. Jobs of a first relay, nearly all, skip that read.
   */
  recheck?: boolean;
}

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

/** The job document as Agenda stores it, as far as the claim reads and writes it. */
interface JobDoc {
  _id: ObjectId;
  lockedAt: Date | null;
  data: DeliveryJobData;
}

export interface DeliverDeps {
  store: Store;
  /**
   * The endpoint read and the attempt record of every attempt: the store's, gathered across the
   * process's concurrent deliveries (delivery/gather.ts), each still fresh to its caller.
   */
  findEndpoint: (id: string) => Promise<WebhookEndpointDoc | null>;
  recordAttempt: (attempt: DeliveryAttemptInput) => Promise<boolean>;
  jobs: Collection<JobDoc>;
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
 * Claims the next attempt number of this job, atomically and fenced by the lock this worker took:
 * the update matches only while the job's `lockedAt` is still ours, so when a lock expired and
 * another worker took the job over, at most one of the two gets each attempt number. Refreshes
 * the lock, so its lifetime counts from the attempt's start. Returns the number, or null.
 */
async function claimAttempt(jobs: Collection<JobDoc>, job: Job<DeliveryJobData>): Promise<number | null> {
  const lockedAt = new Date();
  const claimed = await jobs.findOneAndUpdate(
    { _id: new ObjectId(String(job.attrs._id)), lockedAt: job.attrs.lockedAt ?? null },
    { $inc: { "data.attempt": 1 }, $set: { lockedAt } },
    { returnDocument: "after", projection: { "data.attempt": 1 } },
  );
  if (!claimed) return null;
  job.attrs.lockedAt = lockedAt;
  job.attrs.data.attempt = claimed.data.attempt;
  return claimed.data.attempt;
}

export async function deliver(deps: DeliverDeps, job: Job<DeliveryJobData>): Promise<void> {
  const { store, logger } = deps;
  const { event_id: eventId, endpoint_id: endpointId } = job.attrs.data;
  const attempt = await claimAttempt(deps.jobs, job);
  if (attempt === null) {
    logger.warn({ eventId, endpointId }, "delivery taken over by another worker; not sending");
    return;
  }
  const [event, endpoint, madeBefore] = await Promise.all([
    eventOf(store, job.attrs.data),
    deps.findEndpoint(endpointId),
    // A job is removed when its delivery finishes, so a relay that runs its hook again for the
    // same event later (the sweep overtaking a slow writer, a writer that crashed after its
    // hooks) creates a new job, which starts counting at 1 again. That attempt being recorded
    // already means the delivery was made: this job must not send it a second time.
    attempt === 1 && job.attrs.data.recheck ? store.deliveryAttempts.exists(eventId, endpointId, 1) : false,
  ]);
  if (madeBefore) {
    logger.info({ eventId, endpointId }, "delivery already made by an earlier job; not sending again");
    return;
  }
  // Deleted or disabled (by its owner or by failures): the delivery stops here.
  if (!event || !endpoint || endpoint.status !== "enabled") return;

  const base = {
    workspace_id: event.workspace_id,
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
    if (report.succeeded) {
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
      return;
    }
  }
  // The last attempt failed (or crashes used up the attempts): the delivery failed.
  logger.info({ eventId, endpointId, attempts: attempt, error: report?.error }, "webhook delivery failed");
  deps.metrics?.deliveryFinished("failed");
  if (await store.webhookEndpoints.deliveryFailed(endpointId)) {
    logger.warn({ endpointId }, "webhook endpoint disabled after consecutive failed deliveries");
    await deps.onEndpointDisabled(endpointId);
  }
}
