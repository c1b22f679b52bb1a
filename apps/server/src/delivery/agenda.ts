import { createHash } from "node:crypto";
import { MongoBackend } from "@agendajs/mongo-backend";
import { Agenda, type Job } from "agenda";
import { type Collection, type Db, ObjectId } from "mongodb";
import type { Agent } from "undici";
import type { Config } from "../config.js";
import type { DeliveryAttemptInput } from "../db/delivery-attempts.js";
import { DELIVERY_JOBS_COLLECTION as JOBS_COLLECTION } from "../db/delivery-jobs.js";
import { isDuplicateKey } from "../db/errors.js";
import type { Store } from "../db/store.js";
import type { StoredEvent } from "../domain/events.js";
import type { Logger } from "../logger.js";
import { type DeliveryJobData, type DeliveryMetrics, deliver } from "./deliver.js";
import { gathered } from "./gather.js";
import { createDeliveryAgent, trustedCertificates } from "./http-client.js";
import { CoalescingNotificationChannel } from "./notification-channel.js";

/**
 * Webhook delivery on Agenda (DESIGN.md §6, issue 11): one Agenda job per (event, endpoint),
 * created by the relay hook in every role, and run by the processes whose ROLE is `worker` or
 * `all`. Agenda's lock on the job (an atomic findOneAndUpdate) shares the jobs among workers; its
 * in-process notification channel runs a job created or rescheduled in this process at once,
 * instead of at the next poll.
 */

export const DELIVERY_JOB = "deliver-webhook";

/**
 * The job's `_id`, derived from the delivery: creating the job is an upsert on `_id`, which the
 * database keeps unique on every deployment (also the embedded fallback), so a second creation
 * of the same delivery (the relay running the hook again after a crash) is a no-op.
 */
export function deliveryJobId(eventId: string, endpointId: string): ObjectId {
  return new ObjectId(createHash("sha256").update(`${eventId}\n${endpointId}`).digest().subarray(0, 12));
}

export type DeliveryConfig = Pick<
  Config,
  | "role"
  | "webhookTimeoutMs"
  | "webhookRetryDelaysMs"
  | "webhookAllowPrivateNetworks"
  | "webhookPollIntervalMs"
  | "webhookConcurrency"
  | "extraCaCertsFile"
>;

export class WebhookDelivery {
  private readonly agenda: Agenda;
  private readonly agent: Agent | undefined;
  private readonly processes: boolean;
  /** Attempts in flight per endpoint in this process (the fairness share). */
  private readonly inFlight = new Map<string, number>();
  /** Jobs running in this process, settled when Agenda has saved their state. */
  private readonly running = new Map<string, () => void>();
  private readonly settled = new Map<string, Promise<void>>();

  constructor(
    db: Db,
    private readonly store: Store,
    config: DeliveryConfig,
    private readonly logger: Logger,
    options: { ca?: string[]; metrics?: DeliveryMetrics } = {},
  ) {
    this.processes = config.role !== "api";
    const concurrency = config.webhookConcurrency;
    this.agenda = new Agenda({
      // The server's own connection; no index creation at connect (it would be an unhandled
      // rejection if the database dropped then): db/delivery-jobs.ts makes it with the others.
      backend: new MongoBackend({ mongo: db, collection: JOBS_COLLECTION, ensureIndex: false }),
      name: `${config.role}-${process.pid}`,
      processEvery: config.webhookPollIntervalMs,
      maxConcurrency: concurrency,
      defaultConcurrency: concurrency,
      // Finished deliveries live on in `delivery_attempts`; their jobs would only slow the lock
      // query (the embedded fallback scans), so they go.
      removeOnComplete: true,
      ...(this.processes ? { notificationChannel: new CoalescingNotificationChannel() } : {}),
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
    const jobs = db.collection(JOBS_COLLECTION) as unknown as Parameters<typeof deliver>[0]["jobs"];
    const findEndpoint = gathered(async (ids: string[]) => {
      const found = await store.webhookEndpoints.findMany([...new Set(ids)]);
      return ids.map((id) => found.find((endpoint) => endpoint._id === id) ?? null);
    });
    const recordAttempt = gathered((attempts: DeliveryAttemptInput[]) =>
      store.deliveryAttempts.recordMany(attempts),
    );
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
        await deliver(
          {
            store,
            findEndpoint,
            recordAttempt,
            jobs,
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

  /** Starts running deliveries (ROLE worker or all). */
  async start(): Promise<void> {
    if (this.processes) await this.agenda.start();
  }

  /**
   * The relay hook (db/outbox.ts): one job per enabled endpoint subscribed to the event's type,
   * due now. Idempotent: the job's `_id` is derived from the delivery and inserted only once.
   * A relay that runs `again` marks the job to check the attempts log first (see `recheck`).
   */
  async enqueue(event: StoredEvent, relay: { again: boolean } = { again: false }): Promise<void> {
    const endpoints = await this.store.webhookEndpoints.subscribedTo(event.workspace_id, event.type);
    await Promise.all(
      endpoints.map(async (endpoint) => {
        const data: DeliveryJobData = {
          event_id: event._id,
          endpoint_id: endpoint._id,
          workspace_id: event.workspace_id,
          attempt: 0,
          event_type: event.type,
          payload: event.payload,
          ...(relay.again ? { recheck: true } : {}),
        };
        const job = this.agenda
          .create(DELIVERY_JOB, data)
          .unique({ _id: deliveryJobId(event._id, endpoint._id) }, { insertOnly: true });
        try {
          await job.save();
        } catch (error) {
          // Two relays of one event raced to insert the same job: the other one made it.
          if (!isDuplicateKey(error)) throw error;
        }
      }),
    );
  }

  /** A disabled endpoint's pending deliveries are removed (each run checks the status too). */
  private async stopEndpoint(endpointId: string): Promise<void> {
    await this.agenda.cancel({ name: DELIVERY_JOB, data: { endpoint_id: endpointId } });
  }

  /**
   * Graceful stop (SIGTERM): take no new jobs and release the locks of those waiting in this
   * process, let the attempts that are running finish (at most `timeoutMs`), close connections.
   */
  async stop(timeoutMs: number): Promise<void> {
    await this.agenda.stop(false);
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
