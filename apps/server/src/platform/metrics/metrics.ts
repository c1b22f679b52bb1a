import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The server's Prometheus metrics, one registry per app so several servers in one test
 * process keep separate counts. Code that has something to count calls a method here
 * (`deliveryAttempt`, `eventRecorded`…) and never touches prom-client; gauges that describe the
 * database (pending jobs, disabled endpoints, database up) are read when Prometheus scrapes,
 * through the sources `watch` is given (metrics-wire.ts), so no process has to keep them in step.
 */

/**
 * How one webhook attempt, or a whole delivery (all its attempts), ended: the metrics' `outcome`
 * label. Not a delivery's outcome (webhooks/deliveries/store.ts `DeliveryOutcome`: retry or settled).
 */
export type AttemptEnd = "succeeded" | "failed";

/** A delivery also ends `dropped` when its endpoint was disabled (or deleted) while it was due. */
export type DeliveryEnd = AttemptEnd | "dropped";

/** What the scrape-time gauges read; each answers from the database when Prometheus scrapes. */
export interface GaugeSources {
  /** Is the database answering right now? */
  databaseUp(): Promise<boolean>;
  /** Webhook endpoints that are disabled, by why: `owner` (PATCHed) or `failures` (15 failed deliveries). */
  disabledEndpoints(): Promise<{ owner: number; failures: number }>;
  /** Deliveries waiting to be sent (first attempts and retries); they are records, not jobs. */
  pendingDeliveries(): Promise<number>;
}

// Seconds. Requests: 2 ms … 10 s; webhook attempts run up to WEBHOOK_TIMEOUT_MS (10 s default).
const REQUEST_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ATTEMPT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: "deskline_http_requests_total",
    help: "HTTP requests answered, by spec operationId (or route) and status code.",
    labelNames: ["operation", "status"],
    registers: [this.registry],
  });
  private readonly requestSeconds = new Histogram({
    name: "deskline_http_request_duration_seconds",
    help: "Time from receiving a request to its answer, by operation and status code.",
    labelNames: ["operation", "status"],
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: "deskline_rate_limited_total",
    help: "Requests refused with 429 rate_limited (the API key's token bucket was empty).",
    registers: [this.registry],
  });
  private readonly replays = new Counter({
    name: "deskline_idempotent_replays_total",
    help: "POSTs answered by replaying a stored response (Idempotent-Replayed: true).",
    registers: [this.registry],
  });
  private readonly events = new Counter({
    name: "deskline_events_recorded_total",
    help: "Events this process moved into the events collection, by type.",
    labelNames: ["type"],
    registers: [this.registry],
  });
  private readonly deliveries = new Counter({
    name: "deskline_webhook_deliveries_total",
    help: "Webhook deliveries (one event to one endpoint, all its attempts) that ended, by outcome: succeeded, failed, dropped.",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  private readonly recoveries = new Counter({
    name: "deskline_webhook_recoveries_total",
    help: "recoverWebhookEndpoint calls that queued deliveries (a replayed answer is not counted).",
    registers: [this.registry],
  });
  private readonly resends = new Counter({
    name: "deskline_webhook_resends_total",
    help: "resendEvent calls (a replayed answer is not counted).",
    registers: [this.registry],
  });
  private readonly queued = new Counter({
    name: "deskline_webhook_deliveries_queued_total",
    help: "Webhook deliveries queued, by origin: event (it happened), resend, recover.",
    labelNames: ["origin"],
    registers: [this.registry],
  });
  private readonly attemptSeconds = new Histogram({
    name: "deskline_webhook_attempt_duration_seconds",
    help: "Duration of single webhook delivery attempts, by outcome; its _count counts attempts.",
    labelNames: ["outcome"],
    buckets: ATTEMPT_BUCKETS,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    // Node's own (heap, event loop lag, CPU, open handles), standard names Prometheus users know.
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** One answered HTTP request. `operation` is bounded: an operationId, a route or `unmatched`. */
  request(operation: string, status: number, seconds: number): void {
    const labels = { operation, status: String(status) };
    this.requests.inc(labels);
    this.requestSeconds.observe(labels, seconds);
  }

  rateLimitRejected(): void {
    this.rateLimited.inc();
  }

  idempotentReplay(): void {
    this.replays.inc();
  }

  eventRecorded(type: string): void {
    this.events.inc({ type });
  }

  /** One webhook attempt ended after `ms` milliseconds (for the delivery worker). */
  deliveryAttempt(outcome: AttemptEnd, ms: number): void {
    this.attemptSeconds.observe({ outcome }, ms / 1000);
  }

  /** A delivery ended: its first attempt succeeded, a retry did, the last one failed, or it was dropped. */
  deliveryFinished(outcome: DeliveryEnd): void {
    this.deliveries.inc({ outcome });
  }

  /** Deliveries were queued (this process recorded them). */
  deliveriesQueued(origin: "event" | "resend" | "recover", count: number): void {
    if (count > 0) this.queued.inc({ origin }, count);
  }

  /** A recoverWebhookEndpoint call ran. */
  recovery(): void {
    this.recoveries.inc();
  }

  /** A resendEvent call ran. */
  resend(): void {
    this.resends.inc();
  }

  /** Registers the scrape-time gauges over `sources`; call once, when the database is wired. */
  watch(sources: GaugeSources): void {
    const registers = [this.registry];
    new Gauge({
      name: "deskline_database_up",
      help: "1 when the database answers a ping at scrape time, else 0 (as /readyz).",
      registers,
      async collect() {
        this.set((await sources.databaseUp()) ? 1 : 0);
      },
    });
    new Gauge({
      name: "deskline_webhook_endpoints_disabled",
      help: "Webhook endpoints with status disabled, by reason: owner (PATCH) or failures (automatic).",
      labelNames: ["reason"],
      registers,
      async collect() {
        const counts = await orNothing(sources.disabledEndpoints());
        this.reset();
        if (counts) for (const [reason, count] of Object.entries(counts)) this.set({ reason }, count);
      },
    });
    new Gauge({
      name: "deskline_webhook_deliveries_pending",
      help: "Webhook deliveries waiting to be sent, first attempts and retries.",
      registers,
      async collect() {
        const count = await orNothing(sources.pendingDeliveries());
        this.reset();
        if (count !== undefined) this.set(count);
      },
    });
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * A gauge whose database read fails is left out of the scrape rather than failing it: with the
 * database down, `deskline_database_up 0` and the process metrics must still reach Prometheus.
 */
async function orNothing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch {
    return undefined;
  }
}
