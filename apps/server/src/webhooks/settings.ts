/**
 * Webhook delivery's settings: how attempts are made and retried, how workers find work, and
 * what one workspace may hold (docs/operations.md, "Configuration" and "Limits").
 */

import parseDuration from "parse-duration";
import { ConfigError, custom, flag, integer, settingGroup, text } from "../platform/settings.js";
import { parseNoProxy, parseProxyUrl } from "./egress-proxy.js";

/** Up to 4 retries after a delivery's first attempt. */
const MAX_RETRIES = 4;

/** What a delay may be written as: one number (fractions allowed) and one unit. */
const DELAY = /^\d+(?:\.\d+)?(?:ms|s|m|h)$/;

/**
 * Parses a list like `1m,5m,30m,2h` or `50ms,50ms` (units `ms`, `s`, `m`, `h`) into milliseconds.
 * One to four delays; the number of delays is the number of retries.
 * @throws {Error} naming the entry that is wrong.
 */
export function parseRetryDelays(text: string): number[] {
  const entries = text.split(",").map((entry) => entry.trim());
  if (entries.length > MAX_RETRIES) {
    throw new Error(`at most ${MAX_RETRIES} retry delays are allowed, got ${entries.length}`);
  }
  return entries.map((entry) => {
    if (!DELAY.test(entry))
      throw new Error(`${JSON.stringify(entry)} is not a delay like 50ms, 30s, 5m or 2h`);
    const ms = parseDuration(entry) ?? Number.NaN;
    if (!Number.isSafeInteger(Math.round(ms))) throw new Error(`${JSON.stringify(entry)} is too long`);
    return Math.round(ms);
  });
}

/** The verifier reads at most this many `v1=` items of a signature header. */
const MAX_SIGNATURES = 16;

/** How attempts are made, retried and spread over workers. */
export const webhookSettings = settingGroup({
  webhookTimeoutMs: integer("WEBHOOK_TIMEOUT_MS", {
    default: 10_000,
    min: 1,
    doc: "a delivery attempt without a 2xx answer by then fails",
  }),
  /** The waits before each retry, in milliseconds (before jitter: webhooks/delivery/retry-schedule.ts). */
  webhookRetryDelaysMs: custom("WEBHOOK_RETRY_DELAYS", {
    unset: "1m,5m,30m,2h",
    accepts: "1 to 4 delays like `50ms`, `30s`, `5m`, `2h`, comma-separated",
    read: parseRetryDelays,
    doc: "waits before retries 1–4 (units `ms`, `s`, `m`, `h`; 1 to 4 of them), each with ±20 % jitter",
  }),
  webhookAllowPrivateNetworks: flag("WEBHOOK_ALLOW_PRIVATE_NETWORKS", {
    default: false,
    doc: "`true` lets webhook endpoints use, and deliveries reach, the special-purpose addresses otherwise refused: loopback, private, shared, link-local, documentation, benchmarking, multicast, reserved, unique-local and their IPv6 forms (dev and tests only). While `false`, an endpoint URL with such an IP address as host is `400 url_address_refused`, and a host name resolving to one fails at connect (the attempts log says `address_refused: …` and no address; the worker logs the host and what it resolved to, for the operator)",
  }),
  /** How retries another process scheduled are found once due, and lanes of a dead worker (webhooks/delivery/wake.ts). */
  webhookPollIntervalMs: integer("WEBHOOK_POLL_INTERVAL_MS", {
    default: 1_000,
    min: 10,
    doc: "how often a worker looks for due deliveries anyway: retries another process scheduled are found this way, and the lanes of a worker that died once their lease ends (deliveries queued in the same process go at once, those of other processes on the next wake); also Agenda's poll",
  }),
  /** Without change streams: how a worker hears of deliveries another process queued (webhooks/delivery/wake.ts). */
  webhookWakeIntervalMs: integer("WEBHOOK_WAKE_INTERVAL_MS", {
    default: 20,
    min: 1,
    doc: "without change streams (a standalone mongod, the embedded database): how often a worker looks for deliveries another process queued, one indexed read (five times as seldom after a second in which it found none); on a replica set a change stream wakes it instead, and this applies only while that stream is down (until it is reopened)",
  }),
  /** Lanes running in one process (webhooks/delivery/worker.ts). */
  webhookConcurrency: integer("WEBHOOK_CONCURRENCY", {
    default: 100,
    min: 1,
    doc: "endpoints one process delivers to at once (one lane each)",
  }),
  /** Attempts in flight to one endpoint, deployment-wide (webhooks/endpoints/lanes.ts). */
  webhookEndpointConcurrency: integer("WEBHOOK_ENDPOINT_CONCURRENCY", {
    default: 10,
    min: 1,
    doc: "attempts in flight to one endpoint across the whole deployment (one lane runs at a time, however many workers): a slow receiver holds at most this many connections, and the other endpoints, those on the same host too, never wait for them",
  }),
  /** Once per streak (webhooks/endpoints/health.ts); below the 15 failures that disable. */
  webhookFailingAfter: integer("WEBHOOK_FAILING_AFTER", {
    default: 5,
    min: 1,
    max: { value: 14, why: "below 15 (the failures that disable)" },
    doc: "the consecutive failed delivery at which an endpoint's workspace gets `webhook_endpoint.failing`, once per streak: a warning before the 15th disables it",
  }),
  /** How long a worker holds an endpoint's lane and its claimed deliveries (webhooks/endpoints/lanes.ts). */
  webhookLeaseMs: integer("WEBHOOK_LEASE_MS", {
    default: undefined,
    min: 100,
    doc: "how long a worker holds an endpoint's lane and the deliveries it claimed before another worker may take them over (a worker that died or paused); unset: `WEBHOOK_TIMEOUT_MS` + 30 s. It must exceed `WEBHOOK_TIMEOUT_MS` + `WEBHOOK_LEASE_MARGIN_MS`",
  }),
  /** Left of a lease, beyond an attempt's timeout, for a send to start (webhooks/delivery/lane.ts). */
  webhookLeaseMarginMs: integer("WEBHOOK_LEASE_MARGIN_MS", {
    default: 2_000,
    min: 0,
    doc: "a lane sends or claims only while its lease has more than `WEBHOOK_TIMEOUT_MS` plus this left (on this process's monotonic clock): the time for recording an outcome, and for clocks that differ",
  }),
  /** Fairness between endpoints (webhooks/delivery/lane.ts). */
  webhookLaneSliceMs: integer("WEBHOOK_LANE_SLICE_MS", {
    default: 1_000,
    min: 10,
    doc: "a lane that has run this long gives its slot up after its batch when other endpoints wait for one (all `WEBHOOK_CONCURRENCY` slots busy), so one endpoint's backlog never keeps the others waiting longer",
  }),
  /** ROLE=all only (webhooks/delivery/running-lanes.ts). */
  webhookLingerMs: integer("WEBHOOK_LINGER_MS", {
    default: 200,
    min: 0,
    doc: "with `ROLE=all`: how long a lane whose batch came up short waits for more of its endpoint's deliveries before letting the lane go (the API beside it queues them in memory); 0: never waits",
  }),
  /** How soon a lane let go early is taken (webhooks/endpoints/lanes.ts). */
  webhookHeldRecheckMs: integer("WEBHOOK_HELD_RECHECK_MS", {
    default: 500,
    min: 10,
    doc: "how soon a worker looks again at an endpoint whose lane another worker holds, whatever that lease says: the longest a lane let go (at the end of a run, at SIGTERM) waits for the next worker",
  }),
  webhookRecoveryPageSize: integer("WEBHOOK_RECOVERY_PAGE_SIZE", {
    default: 1000,
    min: 1,
    doc: "events a recovery job reads, checks and queues per round trip: what it holds in memory, and how much a killed worker's successor looks at again",
  }),
  webhookRecoveryLockMs: integer("WEBHOOK_RECOVERY_LOCK_MS", {
    default: 30_000,
    min: 100,
    doc: "how long a worker running a recovery may go without finishing a page before another worker takes the recovery over (a worker that died)",
  }),
  /** How tests trust their receivers. */
  extraCaCertsFile: text("NODE_EXTRA_CA_CERTS", {
    accepts: "a PEM file",
    doc: "Node's own; deliveries trust these CAs on top of Node's roots and the system store",
  }),
});

/**
 * The egress proxy deliveries go through (webhooks/egress-proxy.ts, webhooks/delivery/proxy-tunnel.ts): `webhookEgress` is
 * undefined without WEBHOOK_PROXY_URL, and WEBHOOK_NO_PROXY alone is refused (it would exempt
 * hosts from a proxy that is not there: a proxy URL left out by mistake).
 */
export const egressSettings = settingGroup(
  {
    proxy: custom("WEBHOOK_PROXY_URL", {
      accepts: "an http(s) URL: `http://[user:password@]host:port`",
      read: parseProxyUrl,
      doc: "a forward proxy every webhook delivery goes through, by HTTP CONNECT (`https://…`: TLS to the proxy too), so receivers can allowlist its fixed addresses; credentials in the URL go as `Proxy-Authorization: Basic` and are never logged. The address policy still decides the destination: the worker resolves and checks the receiver's address and asks the proxy to tunnel to that address, never to a name. A 407 or another refusal fails the attempt (`proxy refused CONNECT: 407 …`). Unset: deliveries connect directly. See [Fixed egress addresses](#fixed-egress-addresses)",
    }),
    noProxy: custom("WEBHOOK_NO_PROXY", {
      accepts: "`*`, `.domain`, hosts, comma-separated",
      unset: "",
      defaultDoc: "unset",
      read: parseNoProxy,
      doc: "with `WEBHOOK_PROXY_URL`: receivers reached directly, not through the proxy: `.example.com` (that domain and every name under it), `hooks.example.com` or an IP address (that host alone), `*` (every host); the address policy applies to them as to any",
    }),
  },
  {
    build: ({ proxy, noProxy }) => {
      if (noProxy.length && !proxy) {
        throw new ConfigError(
          "WEBHOOK_NO_PROXY needs WEBHOOK_PROXY_URL: it names the receivers reached without the proxy",
        );
      }
      return { webhookEgress: proxy ? { proxy, noProxy } : undefined };
    },
  },
);

/** What one workspace can make the service hold or do at once; each refusal names its setting. */
export const limitSettings = settingGroup(
  {
    endpointsPerWorkspace: integer("WEBHOOK_ENDPOINTS_PER_WORKSPACE", {
      default: 100,
      min: 1,
      doc: "the most webhook endpoints a workspace may have; one more is `409 webhook_endpoint_limit_reached`. See [Limits](#limits)",
    }),
    /** Live signing secrets: a rotation past it ends the oldest grace early. */
    secretsPerEndpoint: integer("WEBHOOK_SECRETS_PER_ENDPOINT", {
      default: 5,
      min: 1,
      max: { value: MAX_SIGNATURES, why: `at most ${MAX_SIGNATURES} (receivers read no more signatures)` },
      doc: "the most live signing secrets of an endpoint (the current one and those in their grace period); a rotation past it ends the oldest grace periods at once. See [Limits](#limits)",
    }),
    recoveriesPerEndpoint: integer("WEBHOOK_RECOVERIES_PER_ENDPOINT", {
      default: 1,
      min: 1,
      doc: "recoveries of one endpoint queued or running at once; another is `409 webhook_recovery_in_progress`. See [Limits](#limits)",
    }),
  },
  { build: (values) => ({ limits: { ...values } }) },
);

export type WebhookSettings = ReturnType<typeof webhookSettings.read> &
  ReturnType<typeof egressSettings.read>;
/** The bounds on what a workspace can grow (docs/operations.md "Limits"). */
export type Limits = ReturnType<typeof limitSettings.read>["limits"];
