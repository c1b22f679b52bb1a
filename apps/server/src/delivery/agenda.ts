import { Agenda, type Job } from "agenda";
import type { Collection, Db } from "mongodb";
import type { Agent } from "undici";
import type { Config } from "../config.js";
import type { DeliveryAttemptInput } from "../db/delivery-attempts.js";
import {
  type AttemptClaim,
  claimAttempts,
  DELIVERY_JOB,
  type DeliveryJobData,
  DELIVERY_JOBS_COLLECTION as JOBS_COLLECTION,
} from "../db/delivery-jobs.js";
import type { Store } from "../db/store.js";
import type { DeliveryProgress } from "../db/webhook-deliveries.js";
import type { StoredEvent } from "../domain/events.js";
import type { Logger } from "../logger.js";
import { type DeliveryMetrics, deliver } from "./deliver.js";
import { gathered } from "./gather.js";
import { createDeliveryAgent, trustedCertificates } from "./http-client.js";
import { DeliveryJobsBackend } from "./job-repository.js";
import { CoalescingNotificationChannel } from "./notification-channel.js";
import { listenToDeliveryBell, type Wake } from "./wake.js";

/**
 * Webhook delivery on Agenda (DESIGN.md §6, issue 11): one Agenda job per delivery (an event
 * to an endpoint, db/webhook-deliveries.ts), queued by the relay hook in every role and by resends
 * and recoveries (delivery/queue.ts), and run by the processes whose ROLE is `worker` or `all`.
 * Agenda's locks share the jobs among workers (taken in batches, with the job saves and attempt
 * claims gathered, delivery/job-repository.ts and db/delivery-jobs.ts); its
 * in-process notification channel runs a job queued or rescheduled in this process at once,
 * instead of at the next poll, and so does a ring of the delivery bell for jobs queued by
 * another process (delivery/wake.ts).
 */

export { DELIVERY_JOB };

/** How soon a delivery run that failed on the database runs again. */
const RUN_AGAIN_MS = 1000;

export type DeliveryConfig = Pick<
  Config,
  | "role"
  | "webhookTimeoutMs"
  | "webhookRetryDelaysMs"
  | "webhookAllowPrivateNetworks"
  | "webhookPollIntervalMs"
  | "webhookWakeIntervalMs"
  | "webhookConcurrency"
  | "extraCaCertsFile"
>;

export class WebhookDelivery {
  private readonly agenda: Agenda;
  private readonly backend: DeliveryJobsBackend;
  private readonly agent: Agent | undefined;
  private readonly processes: boolean;
  /** Attempts in flight per endpoint in this process (the fairness share). */
  private readonly inFlight = new Map<string, number>();
  /** Jobs running in this process, settled when Agenda has saved their state. */
  private readonly running = new Map<string, () => void>();
  private readonly settled = new Map<string, Promise<void>>();
  private readonly metrics: DeliveryMetrics | undefined;
  /** The processor's channel (worker and `all` processes only). */
  private readonly channel: CoalescingNotificationChannel | undefined;
  private wake: Wake | undefined;

  constructor(
    db: Db,
    private readonly store: Store,
    private readonly config: DeliveryConfig,
    private readonly logger: Logger,
    options: { ca?: string[]; metrics?: DeliveryMetrics } = {},
  ) {
    this.metrics = options.metrics;
    this.processes = config.role !== "api";
    this.channel = this.processes ? new CoalescingNotificationChannel() : undefined;
    const concurrency = config.webhookConcurrency;
    // Half the slots per lock batch: a busy worker locks in a few round trips what it can run,
    // and leaves the rest of a backlog to the other workers.
    this.backend = new DeliveryJobsBackend(db, Math.max(1, Math.ceil(concurrency / 2)));
    this.agenda = new Agenda({
      backend: this.backend,
      name: `${config.role}-${process.pid}`,
      processEvery: config.webhookPollIntervalMs,
      maxConcurrency: concurrency,
      defaultConcurrency: concurrency,
      // Finished deliveries live on in `delivery_attempts` and `webhook_deliveries`; their jobs are
      // deleted by the save that ends their last run (delivery/job-repository.ts), so Agenda
      // need not remove them one more round trip later.
      removeOnComplete: false,
      ...(this.channel ? { notificationChannel: this.channel } : {}),
    });
    this.agenda.on("error", (err) => this.logger.warn({ err }, "agenda error"));
    if (!this.processes) {
      this.agent = undefined;
      return;
    }
    this.agent = createDeliveryAgent({
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
      ca: options.ca ?? trustedCertificates(config.extraCaCertsFile),
      connections: concurrency,
    });
    const perEndpoint = Math.max(1, Math.ceil(concurrency / 2));
    const claimAttempt = gathered((claims: AttemptClaim[]) => claimAttempts(db, claims));
    const findEndpoint = gathered(async (ids: string[]) => {
      const found = await store.webhookEndpoints.findMany([...new Set(ids)]);
      return ids.map((id) => found.find((endpoint) => endpoint._id === id) ?? null);
    });
    const recordAttempt = gathered((attempts: DeliveryAttemptInput[]) =>
      store.deliveryAttempts.recordMany(attempts),
    );
    const findDelivery = gathered(async (ids: string[]) => {
      const found = await store.webhookDeliveries.findMany([...new Set(ids)]);
      return ids.map((id) => found.find((delivery) => delivery._id === id) ?? null);
    });
    const recordProgress = gathered(async (updates: Array<{ id: string; progress: DeliveryProgress }>) => {
      await store.webhookDeliveries.progress(updates);
      return updates.map(() => undefined);
    });
    // Jobs queued in this process (a relay, a resend, a recovery) run at once, not at the next poll.
    store.deliveryQueue.onQueued(() => this.channel?.wake());
    this.agenda.define<DeliveryJobData>(
      DELIVERY_JOB,
      async (job) => {
        const id = String(job.attrs._id);
        this.settled.set(id, new Promise<void>((done) => this.running.set(id, done)));
        const { endpoint_id: endpointId } = job.attrs.data;
        if ((this.inFlight.get(endpointId) ?? 0) >= perEndpoint) {
          // One endpoint may use half the process's slots: a slow one cannot hold up the others.
          job.attrs.nextRunAt = new Date(Date.now() + 50);
          return;
        }
        try {
          await deliver(
            {
              store,
              findEndpoint,
              recordAttempt,
              findDelivery,
              recordProgress,
              claimAttempt,
              dispatcher: this.agent as Agent,
              logger,
              timeoutMs: config.webhookTimeoutMs,
              retryDelaysMs: config.webhookRetryDelaysMs,
              metrics: options.metrics,
              onEndpointDisabled: (endpoint) => this.stopEndpoint(endpoint),
              inFlight: {
                enter: (e) => this.inFlight.set(e, (this.inFlight.get(e) ?? 0) + 1),
                leave: (e) => this.inFlight.set(e, (this.inFlight.get(e) ?? 1) - 1),
              },
            },
            job,
          );
        } catch (err) {
          // The database went away mid-run (the crash trials cut it). A run that throws is a
          // failed Agenda job, never run again: the delivery would be lost. Run it again later;
          // the next run counts this attempt as interrupted if it was made.
          logger.warn({ err, eventId: job.attrs.data.event_id }, "delivery run failed; running it again");
          job.attrs.nextRunAt = new Date(Date.now() + RUN_AGAIN_MS);
        }
      },
      {
        concurrency,
        // Locked jobs wait in this process's queue; a small lead keeps their locks fresh.
        lockLimit: concurrency * 2,
        // Far longer than an attempt can take (the HTTP timeout, plus the database work around
        // it on a loaded machine), so a lock expires only when its worker died. Agenda also
        // gives up on a run that outlives it, checking every half lifetime.
        lockLifetime: 2 * config.webhookTimeoutMs + 30_000,
      },
    );
    this.agenda.on(`complete:${DELIVERY_JOB}`, (job: Job) => {
      const id = String(job.attrs._id);
      // Every slot was taken: the processor may have stopped locking at its lock limit.
      const saturated = this.settled.size >= concurrency;
      this.running.get(id)?.();
      this.running.delete(id);
      this.settled.delete(id);
      // A retry or a deferral: tell this process's processor, so it runs on time, not at the
      // next poll (a no-op when it is due after the next poll anyway). A delivery finished while
      // every slot was taken: the notification (due now) makes the processor lock more due jobs
      // at once, so a backlog drains at the speed of the deliveries, not at `lockLimit` jobs per
      // poll. (With a free slot the processor's queue is empty and its last filling found no more
      // due jobs: asking again would only cost a lock query that finds nothing.) The channel
      // coalesces these into one queue filling at a time.
      if (job.attrs.nextRunAt || saturated) void this.agenda.publishJobNotification(job);
    });
  }

  /** Resolves once Agenda's backend is connected (it creates its log collection's indexes). */
  ready(): Promise<void> {
    return this.agenda.ready;
  }

  /** Starts running deliveries (ROLE worker or all), woken by the delivery bell. */
  async start(): Promise<void> {
    if (!this.processes) return;
    await this.agenda.start();
    this.wake = await listenToDeliveryBell({
      bell: this.store.deliveryBell,
      onRing: () => this.channel?.wake(),
      intervalMs: this.config.webhookWakeIntervalMs,
      logger: this.logger,
    });
  }

  /**
   * The relay hook (db/outbox.ts): one delivery to every enabled endpoint subscribed to the
   * event's type, due now. Idempotent: an event's delivery to an endpoint has one id, recorded once.
   */
  async enqueue(event: StoredEvent, relay: { again: boolean } = { again: false }): Promise<void> {
    const endpoints = await this.store.webhookEndpoints.subscribedTo(event.workspace_id, event.type);
    await this.store.deliveryQueue.queue(
      endpoints.map((endpoint) => ({ event, endpointId: endpoint._id })),
      { origin: "event", again: relay.again },
    );
  }

  /**
   * A disabled endpoint's pending deliveries stop: their jobs are removed and they are `dropped`
   * (a job queued meanwhile finds the endpoint disabled when it runs and drops its own).
   */
  private async stopEndpoint(endpointId: string): Promise<void> {
    await this.agenda.cancel({ name: DELIVERY_JOB, data: { endpoint_id: endpointId } });
    const dropped = await this.store.webhookDeliveries.dropPending(endpointId);
    for (let i = 0; i < dropped; i++) this.metrics?.deliveryFinished("dropped");
  }

  /**
   * Graceful stop (SIGTERM): take no new jobs and release the locks of those waiting in this
   * process, let the attempts that are running finish (at most `timeoutMs`), close connections.
   */
  async stop(timeoutMs: number): Promise<void> {
    // Before the database closes: the listener has a stream open or a read in flight.
    await this.wake?.stop();
    await this.agenda.stop(false);
    await this.backend.repository.release();
    if (this.settled.size > 0) {
      this.logger.info({ running: this.settled.size }, "letting running webhook attempts finish");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(this.settled.values()),
        new Promise((done) => {
          timer = setTimeout(done, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.agent?.close();
  }

  /** The jobs collection, for tests and benchmarks that look at the queue. */
  jobs(): Collection {
    return this.store.db.collection(JOBS_COLLECTION);
  }
}
