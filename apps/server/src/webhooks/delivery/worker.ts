import { randomUUID } from "node:crypto";
import { MongoBackend } from "@agendajs/mongo-backend";
import { Agenda } from "agenda";
import type { Db } from "mongodb";
import type { Agent } from "undici";
import { receives, type StoredEvent } from "../../events/model.js";
import type { Clock } from "../../platform/clock.js";
import type { ServerSettings } from "../../platform/config.js";
import { gathered } from "../../platform/database/gather.js";
import { idTime } from "../../platform/ids.js";
import type { Logger } from "../../platform/logger.js";
import { attachRecoveryJob, RECOVERY_CONCURRENCY } from "../recovery-job.js";
import type { WebhookSettings } from "../settings.js";
import type { WebhookStores as Store } from "../stores.js";
import { Dispatcher } from "./dispatcher.js";
import { createDeliveryAgent, trustedCertificates } from "./http-client.js";
import { type DeliveryMetrics, type LaneDeps, runLane } from "./lane.js";
import { LaneLeases } from "./lane-leases.js";
import { RecentEvents } from "./recent-events.js";
import { gatheredRecorder } from "./recorder.js";
import type { RunningLane } from "./running-lanes.js";
import { startWake, type WakeSource } from "./wake.js";

/**
 * Webhook delivery (docs/decisions.md, "One schedule: the delivery records"). The delivery
 * records (webhooks/deliveries.ts) are the one schedule: when an endpoint has work is their
 * `due_at`, written by the same operation that queues a delivery or records an outcome. In each
 * worker process one loop, the dispatcher (webhooks/delivery/dispatcher.ts), takes due work: it
 * takes the lanes of endpoints with due deliveries, fleet-wide one at a time (a lease on the
 * endpoint, webhooks/delivery/lane-leases.ts), and runs them (webhooks/delivery/lane.ts): each
 * sends its endpoint's deliveries oldest event first, at most WEBHOOK_ENDPOINT_CONCURRENCY at
 * once, never waiting for a socket another endpoint holds. A process runs up to WEBHOOK_CONCURRENCY lanes
 * at once, so a slow receiver holds one lane, never all of them. Workers hear of deliveries other
 * processes queue through the wake source (webhooks/delivery/wake.ts).
 *
 * Agenda runs the jobs that are jobs, not a schedule kept beside the records: recoveries
 * (webhooks/recovery-job.ts), on workers. (The lane jobs of an earlier version went in a
 * migration: migrations/001-retire-agenda-lane-jobs.ts.)
 */

export const JOBS_COLLECTION = "agenda_jobs";
/** A lane's run yields its slot after this long when other endpoints wait for one. */
const SLICE_MS = 1_000;
/**
 * How long a lane whose batch came up short waits for more, and how often it reads the queue
 * meanwhile (webhooks/delivery/running-lanes.ts; ROLE=all only).
 */
const LINGER_MS = 200;
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
  | "extraCaCertsFile"
>;

/**
 * WEBHOOK_LEASE_MS, or longer than an attempt can take (the timeout) plus the database work
 * around it on a loaded machine, so that a lease expires only when its worker died or paused.
 */
export function leaseLength(config: Pick<DeliveryConfig, "webhookLeaseMs" | "webhookTimeoutMs">): number {
  return config.webhookLeaseMs ?? config.webhookTimeoutMs + 30_000;
}

export class WebhookDelivery {
  /** Agenda, for the jobs that are jobs; started on workers (ROLE worker or all). */
  readonly jobs: Agenda;
  private readonly dispatcher: Dispatcher | undefined;
  private readonly agent: Agent | undefined;
  /** The events this process just queued deliveries of: their lanes need not read them back. */
  private readonly recent = new RecentEvents();
  private wake: WakeSource | undefined;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly store: Store,
    private readonly config: DeliveryConfig,
    private readonly logger: Logger,
    options: { ca?: string[]; metrics?: DeliveryMetrics; clock?: Clock } = {},
  ) {
    this.jobs = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: JOBS_COLLECTION }),
      name: `${config.role}-${process.pid}`,
      processEvery: config.webhookPollIntervalMs,
      maxConcurrency: RECOVERY_CONCURRENCY,
    });
    this.jobs.on("error", (err) => {
      // A lock query still in flight when the database closes at shutdown fails: no news.
      if (!this.stopping) this.logger.warn({ err }, "agenda error");
    });
    store.deliveryQueue.attachLanes(async (due) => this.dispatcher?.queued(due));
    // Recoveries run as Agenda jobs on workers (webhooks/recovery-job.ts); every role can queue one.
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
    });
    // Names this process in the leases it holds (a log line can tell whose a lane was).
    const holder = `${config.role}-${process.pid}-${randomUUID().slice(0, 8)}`;
    const leases = new LaneLeases(store.webhookEndpoints.collection);
    const leaseMs = leaseLength(config);
    const readEvents = this.eventReader();
    const lane = this.laneDeps({ leases, holder, leaseMs, readEvents, metrics: options.metrics });
    this.dispatcher = new Dispatcher({
      deliveries: store.webhookDeliveries,
      leases,
      holder,
      concurrency: config.webhookConcurrency,
      batchSize: perEndpoint,
      leaseMs,
      readEvents,
      runLane: (endpoint, first, more, running, events) =>
        runLane(lane(running), endpoint, first, more, events),
      dropPending: async (endpointId) => {
        const dropped = await store.webhookDeliveries.dropPending(endpointId);
        for (let i = 0; i < dropped; i++) options.metrics?.deliveryFinished("dropped");
      },
      logger,
    });
  }

  /**
   * The bytes of events: those this process just queued from memory, the others read, with the
   * reads of lanes that start together (a fan-out) gathered into one query.
   */
  private eventReader(): LaneDeps["readEvents"] {
    const { store } = this;
    const readStored = gathered(async (lists: string[][]) => {
      const byId = new Map(
        (await store.events.payloadsOf([...new Set(lists.flat())])).map((e) => [e._id, e]),
      );
      return lists.map((ids) => ids.flatMap((id) => byId.get(id) ?? []));
    });
    return async (ids) => {
      const { found, missing } = this.recent.take(ids);
      if (missing.length === 0) return found;
      return [...found, ...(await readStored(missing))];
    };
  }

  /** What every lane run of this process is given; `running` is the run's own handle. */
  private laneDeps(shared: Pick<LaneDeps, "leases" | "holder" | "leaseMs" | "readEvents" | "metrics">) {
    const { store, config } = this;
    const record = gatheredRecorder(store);
    return (running: RunningLane): LaneDeps => ({
      ...shared,
      store,
      record,
      dispatcher: this.agent as Agent,
      logger: this.logger,
      timeoutMs: config.webhookTimeoutMs,
      retryDelaysMs: config.webhookRetryDelaysMs,
      perEndpoint: config.webhookEndpointConcurrency,
      sliceMs: SLICE_MS,
      // Only where the API runs beside the lanes (its writes bring news in memory; a worker would
      // only poll the queue, which slowed its deliveries from 24 to 90 ms), and only while a slot
      // is free: a lane waiting for work must not keep another from running.
      linger: (until) =>
        config.role === "all" && (this.dispatcher?.lanes.size ?? 0) < config.webhookConcurrency
          ? running.linger(until, {
              maxMs: LINGER_MS,
              checkEveryMs: LINGER_CHECK_MS,
              due: async () => {
                const due = await store.webhookDeliveries.nextDue(running.endpointId);
                return due !== null && due.getTime() <= Date.now();
              },
            })
          : Promise.resolve(false),
      crowded: () => this.dispatcher?.crowded() ?? false,
      stopping: () => this.stopping,
      retryAt: (at) => this.dispatcher?.wakeAt(at.getTime()),
    });
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
    dispatcher.wake();
  }

  /**
   * The relay hook (events/outbox-relay.ts): one delivery of each event to every enabled endpoint of its
   * workspace subscribed to its type, due now; one read of the endpoints for the whole batch.
   * Idempotent: an event's delivery to an endpoint has one id, recorded once.
   */
  async enqueue(events: StoredEvent[]): Promise<void> {
    const endpoints = await this.store.webhookEndpoints.enabledIn([
      ...new Set(events.map((e) => e.workspace_id)),
    ]);
    const requests = events.flatMap((event) =>
      endpoints
        .filter((endpoint) => endpoint.workspace_id === event.workspace_id && receives(endpoint, event))
        .map((endpoint) => ({ event, endpointId: endpoint._id })),
    );
    if (this.dispatcher && requests.length > 0) this.recent.remember(requests.map((r) => r.event));
    // Due at their event's time (its id's milliseconds): an event relayed late (a sweep racing
    // the writer's relay, or after a crash) still goes before the later events of its endpoint
    // that are waiting, rather than behind them.
    await this.store.deliveryQueue.queue(requests, {
      origin: "event",
      dueAt: ({ event }) => new Date(idTime(event._id)),
    });
  }

  /**
   * Graceful stop (SIGTERM): start no new lanes, let the runs under way finish their batch (at
   * most `timeoutMs`) and let their lanes go, close connections.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
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
