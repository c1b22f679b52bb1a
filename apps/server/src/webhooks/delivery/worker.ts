import { randomUUID } from "node:crypto";
import { MongoBackend } from "@agendajs/mongo-backend";
import { Agenda } from "agenda";
import type { Db } from "mongodb";
import type { Agent } from "undici";
import type { Clock } from "../../platform/clock.js";
import type { ServerSettings } from "../../platform/config.js";
import { gathered } from "../../platform/database/gather.js";
import type { Logger } from "../../platform/logger.js";
import type { Queued } from "../deliveries/queue.js";
import { attachRecoveryJob, RECOVERY_CONCURRENCY } from "../recovery/job.js";
import type { WebhookSettings } from "../settings.js";
import type { WebhookStores as Store } from "../stores.js";
import { Dispatcher } from "./dispatcher.js";
import { sweepHealth } from "./health-count.js";
import { createDeliveryAgent, trustedCertificates } from "./http-client.js";
import { type DeliveryMetrics, type LaneHost, type LaneServices, runLane } from "./lane.js";
import { RecentEvents } from "./recent-events.js";
import { gatheredRecorder } from "./recorder.js";
import type { RunningLane } from "./running-lanes.js";
import { startWake, type WakeSource } from "./wake.js";

/**
 * Webhook delivery (docs/decisions.md, "One schedule: the delivery records"). The delivery
 * records (webhooks/deliveries/store.ts) are the one schedule: when an endpoint has work is their
 * `due_at`, written by the same operation that queues a delivery or records an outcome. In each
 * worker process one loop, the dispatcher (webhooks/delivery/dispatcher.ts), takes due work: it
 * takes the lanes of endpoints with due deliveries, fleet-wide one at a time (a lease on the
 * endpoint, webhooks/endpoints/lanes.ts), and runs them (webhooks/delivery/lane.ts): each
 * sends its endpoint's deliveries oldest event first, at most WEBHOOK_ENDPOINT_CONCURRENCY at
 * once, never waiting for a socket another endpoint holds. A process runs up to WEBHOOK_CONCURRENCY lanes
 * at once, so a slow receiver holds one lane, never all of them. Workers hear of deliveries other
 * processes queue through the wake source (webhooks/delivery/wake.ts).
 *
 * Agenda runs the jobs that are jobs, not a schedule kept beside the records: recoveries
 * (webhooks/recovery/job.ts), on workers. (The lane jobs of an earlier version went in a
 * migration: migrations/001-retire-agenda-lane-jobs.ts.)
 */

export const JOBS_COLLECTION = "agenda_jobs";
/**
 * How often a lane lingering for more (WEBHOOK_LINGER_MS) reads the queue meanwhile, at most
 * (webhooks/delivery/running-lanes.ts).
 */
const LINGER_CHECK_MS = 50;

export type DeliveryConfig = Pick<
  ServerSettings & WebhookSettings,
  | "role"
  | "webhookTimeoutMs"
  | "webhookRetryDelaysMs"
  | "webhookAllowPrivateNetworks"
  | "webhookPollIntervalMs"
  | "webhookWakeIntervalMs"
  | "webhookConcurrency"
  | "webhookEndpointConcurrency"
  | "webhookLeaseMs"
  | "webhookLeaseMarginMs"
  | "webhookLaneSliceMs"
  | "webhookLingerMs"
  | "webhookHeldRecheckMs"
  | "extraCaCertsFile"
  | "webhookEgress"
>;

/**
 * WEBHOOK_LEASE_MS, or longer than an attempt can take (the timeout) plus the database work
 * around it on a loaded machine, so that a lease expires only when its worker died or paused.
 */
export function leaseLength(config: Pick<DeliveryConfig, "webhookLeaseMs" | "webhookTimeoutMs">): number {
  return config.webhookLeaseMs ?? config.webhookTimeoutMs + 30_000;
}

export class WebhookDelivery implements LaneHost {
  /** Agenda, for the jobs that are jobs; started on workers (ROLE worker or all). */
  readonly jobs: Agenda;
  private readonly dispatcher: Dispatcher | undefined;
  private readonly agent: Agent | undefined;
  /** The events this process just queued deliveries of: their lanes need not read them back. */
  private readonly recent = new RecentEvents();
  private wake: WakeSource | undefined;
  private healthSweep: NodeJS.Timeout | undefined;
  private isStopping = false;
  /** Leases and due times are decided on the database's time, whichever process decides. */
  readonly clock: Clock;
  private readonly leaseMs: number;

  constructor(
    private readonly db: Db,
    private readonly store: Store,
    private readonly config: DeliveryConfig,
    private readonly logger: Logger,
    /** `clock`: the database's (server.ts starts it), or one a test moves. */
    options: { clock: Clock; ca?: string[]; metrics?: DeliveryMetrics },
  ) {
    this.clock = options.clock;
    this.leaseMs = leaseLength(config);
    this.jobs = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: JOBS_COLLECTION }),
      name: `${config.role}-${process.pid}`,
      processEvery: config.webhookPollIntervalMs,
      maxConcurrency: RECOVERY_CONCURRENCY,
    });
    this.jobs.on("error", (err) => {
      // A lock query still in flight when the database closes at shutdown fails: no news.
      if (!this.isStopping) this.logger.warn({ err }, "agenda error");
    });
    // Recoveries run as Agenda jobs on workers (webhooks/recovery/job.ts); every role can queue one.
    attachRecoveryJob(this.jobs, store, logger, config.role !== "api");
    if (config.role === "api") return;
    const perEndpoint = config.webhookEndpointConcurrency;
    this.agent = createDeliveryAgent({
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
      ca: options.ca ?? trustedCertificates(config.extraCaCertsFile),
      // No cap per origin: an endpoint's budget is its lane's, and no attempt waits for a socket.
      connections: null,
      onRefused: (refusal) =>
        logger.warn(refusal, "webhook delivery refused: the address is not publicly reachable"),
      egress: config.webhookEgress,
    });
    // Names this process in the leases it holds (a log line can tell whose a lane was).
    const holder = `${config.role}-${process.pid}-${randomUUID().slice(0, 8)}`;
    const leases = store.webhookEndpoints.lanes;
    const leaseMs = this.leaseMs;
    const readEvents = this.eventReader();
    const lanes = this.laneServices({ leases, holder, readEvents, metrics: options.metrics });
    this.dispatcher = new Dispatcher({
      deliveries: store.webhookDeliveries,
      clock: this.clock,
      leases,
      holder,
      concurrency: config.webhookConcurrency,
      batchSize: perEndpoint,
      leaseMs,
      heldRecheckMs: config.webhookHeldRecheckMs,
      readEvents,
      runLane: (start, running) => runLane(lanes, this, running, start),
      dropPending: (endpointId) => this.dropPending(endpointId, options.metrics),
      logger,
    });
    // Deliveries queued in this process go at once: to a lane running here, or the next round.
    store.deliveryQueue.onQueued((batch) => this.heard(batch));
  }

  /** An endpoint was deleted, disabled or paused: its pending deliveries are dropped. */
  private async dropPending(endpointId: string, metrics: DeliveryMetrics | undefined): Promise<void> {
    const dropped = await this.store.webhookDeliveries.dropPending(endpointId);
    for (let i = 0; i < dropped; i++) metrics?.deliveryFinished("dropped");
  }

  /**
   * The bytes of events: those this process just queued from memory, the others read, with the
   * reads of lanes that start together (a fan-out) gathered into one query.
   */
  private eventReader(): LaneServices["readEvents"] {
    const { store } = this;
    const readStored = gathered(async (lists: string[][]) => {
      const byId = new Map(
        (await store.events.payloadsOf([...new Set(lists.flat())])).map((e) => [e._id, e]),
      );
      return lists.map((ids) => ids.flatMap((id) => byId.get(id) ?? []));
    });
    return async (deliveries) => {
      const { found, missing } = this.recent.take(deliveries);
      if (missing.length === 0) return found;
      return [...found, ...(await readStored(missing))];
    };
  }

  /** What every lane of this process works with. */
  private laneServices({
    leases,
    holder,
    readEvents,
    metrics,
  }: Pick<LaneServices, "leases" | "readEvents" | "metrics"> & { holder: string }): LaneServices {
    const { store, config } = this;
    return {
      store,
      leases,
      clock: this.clock,
      http: this.agent as Agent,
      record: gatheredRecorder(store),
      readEvents,
      logger: this.logger,
      ...(metrics && { metrics }),
      settings: {
        holder,
        timeoutMs: config.webhookTimeoutMs,
        retryDelaysMs: config.webhookRetryDelaysMs,
        perEndpoint: config.webhookEndpointConcurrency,
        leaseMs: this.leaseMs,
        marginMs: config.webhookLeaseMarginMs,
        sliceMs: config.webhookLaneSliceMs,
      },
    };
  }

  /**
   * A lane waits for more only where the API runs beside it (its writes bring news in memory; a
   * worker would only poll the queue, which slowed its deliveries from 24 to 90 ms), and only
   * while a slot is free: a lane waiting for work must not keep another from running.
   */
  linger(lane: RunningLane, until: number): Promise<boolean> {
    const { config, store } = this;
    const busy = (this.dispatcher?.lanes.size ?? 0) >= config.webhookConcurrency;
    if (config.role !== "all" || config.webhookLingerMs === 0 || busy) {
      return Promise.resolve(false);
    }
    return lane.linger(until, {
      maxMs: config.webhookLingerMs,
      checkEveryMs: Math.min(LINGER_CHECK_MS, config.webhookLingerMs),
      due: async () => {
        const due = await store.webhookDeliveries.nextDue(lane.endpointId);
        return due !== null && due.getTime() <= this.clock.now();
      },
    });
  }

  crowded(): boolean {
    return this.dispatcher?.crowded() ?? false;
  }

  stopping(): boolean {
    return this.isStopping;
  }

  retryAt(at: Date): void {
    this.dispatcher?.wakeAt(at.getTime());
  }

  /** Resolves once Agenda's backend is connected (it creates its indexes). */
  async ready(): Promise<void> {
    await this.jobs.ready;
  }

  /** Starts delivering (ROLE worker or all): the wake source, the first round, Agenda's jobs. */
  async start(): Promise<void> {
    const dispatcher = this.dispatcher;
    if (!dispatcher) return;
    this.wake = await startWake(this.db, dispatcher, {
      wakeIntervalMs: this.config.webhookWakeIntervalMs,
      pollIntervalMs: this.config.webhookPollIntervalMs,
      logger: this.logger,
    });
    this.logger.info(this.wake.description);
    await this.jobs.start();
    this.startHealthSweep();
    dispatcher.wake();
  }

  /** Counts, once a lease has passed, the outcomes a worker that died left uncounted (health-count.ts). */
  private startHealthSweep(): void {
    const counting = { store: this.store, logger: this.logger, clock: this.clock };
    this.healthSweep = setInterval(() => {
      sweepHealth(counting, this.leaseMs)
        .then((disabled) => Promise.all([...disabled].map((id) => this.dropPending(id, undefined))))
        .catch((err: unknown) => this.logger.warn({ err }, "webhook health sweep failed; trying again"));
    }, this.leaseMs);
    this.healthSweep.unref();
  }

  /** Deliveries this process just queued: their events kept in memory, their lanes told. */
  private heard({ deliveries, events }: Queued): void {
    const queuedOf = new Set(deliveries.map((delivery) => delivery.event_id));
    this.recent.remember(
      events.filter((event) => queuedOf.has(event._id)),
      deliveries,
    );
    this.dispatcher?.queued(deliveries);
  }

  /**
   * Graceful stop (SIGTERM): start no new lanes, let the runs under way finish their batch (at
   * most `timeoutMs`) and let their lanes go, close connections.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.isStopping = true;
    clearInterval(this.healthSweep);
    await this.wake?.stop();
    await this.jobs.stop(false);
    if (this.dispatcher && this.dispatcher.lanes.size > 0) {
      this.logger.info({ running: this.dispatcher.lanes.size }, "letting running webhook attempts finish");
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.dispatcher?.stop(),
      new Promise((done) => {
        timer = setTimeout(done, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    await this.agent?.close();
  }
}
