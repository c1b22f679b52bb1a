import { MongoBackend } from "@agendajs/mongo-backend";
import { Agenda, type Job } from "agenda";
import type { Db } from "mongodb";
import type { Agent } from "undici";
import { isSubscribed, type StoredEvent } from "../../events/model.js";
import type { Config } from "../../platform/config.js";
import type { Logger } from "../../platform/logger.js";
import { attachRecoveryJob, RECOVERY_CONCURRENCY } from "../recovery-job.js";
import type { WebhookStores as Store } from "../stores.js";
import { createDeliveryAgent, trustedCertificates } from "./http-client.js";
import { type DeliveryMetrics, type LaneDeps, runLane } from "./lane.js";
import { RecentEvents } from "./recent-events.js";
import { type RunningLane, RunningLanes } from "./running-lanes.js";
import { chooseWakeChannel, type PollingNotificationChannel } from "./wake-channel.js";

/**
 * Webhook delivery on Agenda, used through its documented API (docs/decisions.md, "One record per
 * delivery"): the delivery records (webhooks/deliveries.ts) are the queue, and Agenda runs one
 * job per endpoint that has due deliveries, its lane (`unique` on the endpoint id). A lane's run
 * (webhooks/delivery/lane.ts) sends that endpoint's due deliveries oldest first, at most
 * WEBHOOK_ENDPOINT_CONCURRENCY at once, and schedules itself for the endpoint's next due one; so a
 * slow receiver holds one slot of WEBHOOK_CONCURRENCY, never all of them. A recurring job, the
 * safety net, schedules the lane of any endpoint whose due deliveries have none (a process died
 * between recording deliveries and scheduling their lane). Workers hear of lanes other processes
 * schedule through Agenda's notification channel (webhooks/delivery/wake-channel.ts).
 */

export const LANE_JOB = "webhook-endpoint-lane";
export const SAFETY_NET_JOB = "webhook-lanes-safety-net";
/** The jobs Agenda kept per delivery before lanes; removed at start (their deliveries have a `due_at`). */
const RETIRED_JOB = "webhook-delivery";
export const JOBS_COLLECTION = "agenda_jobs";
/** How often the safety net looks for due deliveries whose lane is missing. */
const SAFETY_NET_INTERVAL_MS = 5_000;
/** A lane's run yields its slot after this long, so a backlog cannot keep one from other endpoints. */
const SLICE_MS = 1_000;
/**
 * How long a lane whose batch came up short waits for more, and how often it reads the queue
 * meanwhile (webhooks/delivery/running-lanes.ts; ROLE=all only).
 */
const LINGER_MS = 200;
const LINGER_CHECK_MS = 50;

export type DeliveryConfig = Pick<
  Config,
  | "role"
  | "webhookTimeoutMs"
  | "webhookRetryDelaysMs"
  | "webhookAllowPrivateNetworks"
  | "webhookPollIntervalMs"
  | "webhookWakeIntervalMs"
  | "webhookConcurrency"
  | "webhookEndpointConcurrency"
  | "extraCaCertsFile"
>;

interface LaneData {
  endpoint_id: string;
}

export class WebhookDelivery {
  private readonly agenda: Agenda;
  private readonly agent: Agent | undefined;
  private readonly processes: boolean;
  /** Lane runs under way in this process. */
  private readonly lanes = new RunningLanes();
  /**
   * Endpoints whose lane this process scheduled through Agenda and has not run since: its
   * processor hears of those at once, so their runs say nothing of work from other processes.
   */
  private readonly scheduledHere = new Set<string>();
  /** The events this process just queued deliveries of: their lanes need not read them back. */
  private readonly recent = new RecentEvents();
  private poll: PollingNotificationChannel | undefined;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly store: Store,
    private readonly config: DeliveryConfig,
    private readonly logger: Logger,
    options: { ca?: string[]; metrics?: DeliveryMetrics } = {},
  ) {
    this.processes = config.role !== "api";
    this.agenda = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: JOBS_COLLECTION }),
      name: `${config.role}-${process.pid}`,
      processEvery: config.webhookPollIntervalMs,
      maxConcurrency: config.webhookConcurrency + 1 + RECOVERY_CONCURRENCY,
    });
    this.agenda.on("error", (err) => {
      // A lock query still in flight when the database closes at shutdown fails: no news.
      if (this.stopping) return;
      this.logger.warn({ err }, "agenda error");
    });
    store.deliveryQueue.attachLanes((due) => this.schedule(due));
    attachRecoveryJob(this.agenda, store, logger, this.processes);
    if (!this.processes) return;
    const perEndpoint = config.webhookEndpointConcurrency;
    this.agent = createDeliveryAgent({
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
      ca: options.ca ?? trustedCertificates(config.extraCaCertsFile),
      connections: perEndpoint,
      onRefused: (refusal) =>
        logger.warn(refusal, "webhook delivery refused: the address is not publicly reachable"),
    });
    // A batch is what one endpoint may have in flight: the outcomes of every attempt sent are
    // recorded together, so a worker that dies has sent at most this many without recording them.
    const batchSize = perEndpoint;
    // Longer than an attempt can take (the timeout), plus the database work around it on a
    // loaded machine: a lease expires only when its worker died.
    const leaseMs = config.webhookTimeoutMs + 30_000;
    const lane = (job: Job<LaneData>, running: RunningLane): LaneDeps => ({
      store,
      dispatcher: this.agent as Agent,
      logger,
      timeoutMs: config.webhookTimeoutMs,
      retryDelaysMs: config.webhookRetryDelaysMs,
      perEndpoint,
      batchSize,
      leaseMs,
      sliceMs: SLICE_MS,
      readEvents: async (ids) => {
        const { found, missing } = this.recent.take(ids);
        if (missing.length === 0) return found;
        return [...found, ...(await store.events.payloadsOf(missing))];
      },
      keepAlive: () => job.touch(),
      // Only where the API runs beside the lanes (its writes bring news without Agenda; a worker
      // would only poll the queue, which costs more than Agenda's wake and slowed its deliveries
      // from 24 to 90 ms), and only while a slot is free: a lane waiting for work must not keep
      // another from running.
      linger: (until) =>
        config.role === "all" && this.lanes.size < config.webhookConcurrency
          ? running.linger(until, {
              maxMs: LINGER_MS,
              checkEveryMs: LINGER_CHECK_MS,
              due: async () => {
                const due = await store.webhookDeliveries.nextDue(job.attrs.data.endpoint_id);
                return due !== null && due.getTime() <= Date.now();
              },
            })
          : Promise.resolve(false),
      stopping: () => this.stopping,
      metrics: options.metrics,
    });
    this.agenda.define<LaneData>(
      LANE_JOB,
      async (job) => {
        const endpointId = job.attrs.data.endpoint_id;
        // Work another process scheduled is flowing: keep the wake poll at its full rate.
        if (!this.scheduledHere.delete(endpointId)) this.poll?.active();
        try {
          const next = await this.lanes.run(endpointId, (running) => runLane(lane(job, running), endpointId));
          if (next) job.schedule(next);
        } catch (err) {
          // The database went away mid-run. Agenda would count a throw as a failed job, never run
          // again: run the lane again soon instead; its claimed deliveries come back when their
          // lease expires.
          logger.warn({ err, endpointId }, "webhook lane run failed; running it again");
          job.schedule(new Date(Date.now() + 1_000));
        }
      },
      { concurrency: config.webhookConcurrency, lockLimit: config.webhookConcurrency, lockLifetime: leaseMs },
    );
    // A delivery queued between a run's last look and Agenda saving the run's end would wait for
    // the lane's next time: after each run, look once more (one read) and pull the lane forward.
    this.agenda.on(`complete:${LANE_JOB}`, (job: Job) => {
      const endpointId = (job.attrs.data as LaneData).endpoint_id;
      const scheduled = job.attrs.nextRunAt ? new Date(job.attrs.nextRunAt) : null;
      // A lane that is due again at once (it yielded) will look for itself.
      if (scheduled && scheduled.getTime() <= Date.now()) return;
      void this.store.webhookDeliveries
        .nextDue(endpointId)
        .then((due) =>
          due && (!scheduled || due < scheduled) ? this.schedule(new Map([[endpointId, due]])) : undefined,
        )
        .catch((err) => logger.warn({ err, endpointId }, "could not check a lane after its run"));
    });
    this.agenda.define(SAFETY_NET_JOB, async () => {
      const due = await store.webhookDeliveries.endpointsDue();
      if (due.size > 0) await this.schedule(due);
    });
  }

  /** Resolves once Agenda's backend is connected (it creates its indexes). */
  async ready(): Promise<void> {
    await this.agenda.ready;
    await this.agenda.cancel({ name: RETIRED_JOB });
    const adopted = await this.store.webhookDeliveries.adoptUnqueued();
    if (adopted > 0) this.logger.info({ adopted }, "queued deliveries recorded by an earlier version");
  }

  /** Starts running lanes (ROLE worker or all), woken through the chosen notification channel. */
  async start(): Promise<void> {
    if (!this.processes) return;
    const wake = await chooseWakeChannel(this.db, {
      jobsCollection: JOBS_COLLECTION,
      jobName: LANE_JOB,
      intervalMs: this.config.webhookWakeIntervalMs,
    });
    this.poll = wake.poll;
    wake.channel.on("error", (err) => {
      // A change that arrives while the stream closes at shutdown is an error to the driver, and
      // no news to us.
      if (wake.channel.state === "disconnected") return;
      this.logger.warn({ err }, "webhook wake channel error");
    });
    this.agenda.notifyVia(wake.channel);
    this.logger.info(wake.description);
    await this.agenda.start();
    await this.agenda.every(SAFETY_NET_INTERVAL_MS, SAFETY_NET_JOB);
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
        .filter(
          (endpoint) =>
            endpoint.workspace_id === event.workspace_id && isSubscribed(endpoint.events, event.type),
        )
        .map((endpoint) => ({ event, endpointId: endpoint._id })),
    );
    if (this.processes && requests.length > 0) this.recent.remember(requests.map((r) => r.event));
    await this.store.deliveryQueue.queue(requests, { origin: "event" });
  }

  /**
   * Makes sure each endpoint's lane runs no later than its time: creates the lane where there is
   * none (insert-only, so a running lane is left alone), and pulls an idle lane forward when it is
   * due later. A lane that is running looks again when it ends (see the `complete` listener).
   */
  async schedule(due: Map<string, Date>): Promise<void> {
    // A lane running here hears of its deliveries directly; the others are Agenda's to run.
    const elsewhere = this.lanes.notify(due);
    await Promise.all(
      [...elsewhere].map(async ([endpointId, at]) => {
        if (this.processes) this.scheduledHere.add(endpointId);
        const lane = await this.laneJob(endpointId, at)
          .unique({ "data.endpoint_id": endpointId }, { insertOnly: true })
          .save();
        const { lockedAt, nextRunAt } = lane.attrs;
        if (!lockedAt && (!nextRunAt || new Date(nextRunAt) > at)) {
          await this.laneJob(endpointId, at).unique({ "data.endpoint_id": endpointId }).save();
        }
      }),
    );
  }

  private laneJob(endpointId: string, at: Date): Job<LaneData> {
    return this.agenda.create<LaneData>(LANE_JOB, { endpoint_id: endpointId }).schedule(at);
  }

  /**
   * Graceful stop (SIGTERM): take no new lanes and release those waiting in this process, let the
   * runs under way finish their batch (at most `timeoutMs`), close connections.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    await this.agenda.stop(false);
    if (this.lanes.size > 0) {
      this.logger.info({ running: this.lanes.size }, "letting running webhook attempts finish");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.lanes.drain(),
        new Promise((done) => {
          timer = setTimeout(done, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.agent?.close();
  }
}
