/** Typed configuration read once from the environment; nothing else reads process.env. */

import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import parseDuration from "parse-duration";

/**
 * Where the embedded database keeps its data by default: `.deskline/data` in the checkout (this
 * file is apps/server/src/platform/config.ts, or dist/platform/config.js in the build), git-ignored.
 */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL("../../../../.deskline/data", import.meta.url));

/**
 * Which embedded database to start without MONGODB_URI (platform/database/embedded.ts); `auto` tries mongod
 * first; `off` starts none, so MONGODB_URI is required (the container image: an in-memory database
 * there would lose its data with the container, and the image has no JDK for the fallback).
 */
export const EMBEDDED_DATABASE_CHOICES = [
  "auto",
  "mongodb-memory-server",
  "mongo-java-server",
  "off",
] as const;
export type EmbeddedDatabaseChoice = (typeof EMBEDDED_DATABASE_CHOICES)[number];

/** What a process does (docs/design.md, Webhook delivery): serve the API, deliver webhooks, or both. */
export const ROLES = ["all", "api", "worker"] as const;
export type Role = (typeof ROLES)[number];

/**
 * LOG_FORMAT: `auto` (default) writes readable lines when stdout is a terminal and JSON lines
 * otherwise; `json` and `pretty` force one (docs/operations.md).
 */
export const LOG_FORMATS = ["auto", "json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** OTEL_EXPORTER_OTLP_PROTOCOL values the server can export with (both OTLP over HTTP). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
/** OTEL_TRACES_SAMPLER values, as the OpenTelemetry specification names them. */
export const TRACE_SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;

/** Tracing settings; present only when an OTLP endpoint is configured (docs/operations.md). */
export interface TelemetryConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  tracesUrl: string;
  protocol: (typeof OTLP_PROTOCOLS)[number];
  serviceName: string;
  sampler: { name: (typeof TRACE_SAMPLERS)[number]; ratio: number };
  /** OTEL_RESOURCE_ATTRIBUTES: `key=value,…`, added to every span's resource. */
  resourceAttributes: Record<string, string>;
}

export interface Config {
  /** ROLE: `api` serves HTTP, `worker` delivers webhooks, `all` (default) does both. */
  role: Role;
  port: number;
  host: string;
  /** A real MongoDB deployment; unset starts the embedded database (platform/database/embedded.ts). */
  mongodbUri: string | undefined;
  databaseName: string;
  /** DESKLINE_EMBEDDED_DB: pins the embedded database instead of trying mongod first. */
  embeddedDatabase: EmbeddedDatabaseChoice;
  /**
   * DESKLINE_DATA_DIR: where the embedded database keeps its data across restarts (absolute;
   * default DEFAULT_DATA_DIR). Unused with MONGODB_URI, and by `--ephemeral` starts (in memory).
   */
  dataDir: string;
  /** Bearer token of the admin API; unset turns the admin API off. */
  adminToken: string | undefined;
  logLevel: string;
  /** LOG_FORMAT: see LOG_FORMATS. */
  logFormat: LogFormat;
  /** OpenTelemetry tracing; undefined (off, nothing loaded) unless an OTLP endpoint is set. */
  telemetry: TelemetryConfig | undefined;
  /** Bearer token of GET /metrics; unset leaves it open (keep it off the internet then). */
  metricsToken: string | undefined;
  /** Token bucket per API key; 0 turns rate limiting off. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /**
   * RATE_LIMIT_SHARED: the buckets live in MongoDB, so a key gets its rate across all API
   * processes (default); false keeps them in each process's memory (N processes: N× the rate).
   */
  rateLimitShared: boolean;
  /**
   * How long a process trusts an API key it has looked up (0: look it up on every request). A
   * revocation takes effect at once in the process that served it, within this long in others.
   */
  apiKeyCacheMs: number;
  /** How long an idempotency key is remembered (docs/design.md, API conventions: at least 24 h). */
  idempotencyTtlMs: number;
  /** The largest request body accepted (docs/design.md, API conventions: 1 MiB). */
  bodyLimitBytes: number;
  /** How long graceful shutdown waits for in-flight requests. */
  shutdownTimeoutMs: number;
  /** How long events stay readable through the events API (docs/design.md, Events: 30 days). */
  eventRetentionMs: number;
  /**
   * How often the relay sweeps documents for events their writer did not move to `events` (it
   * crashed in between); the writer itself relays right after its write.
   */
  eventRelayIntervalMs: number;
  /** Whether the writer relays its events right after the write; off only to test the sweep. */
  eventRelayImmediate: boolean;
  /**
   * How long after its `updated_at` a write is surely committed (stamp-to-commit time plus clock
   * skew between API processes): an incremental pull answers a page whose last change is younger
   * than this only once it is this old, so no page passes over a write still committing.
   */
  syncSettleMs: number;
  /** WEBHOOK_TIMEOUT_MS: an attempt that has no 2xx answer by then fails. */
  webhookTimeoutMs: number;
  /** WEBHOOK_RETRY_DELAYS: the waits before each retry, in milliseconds (before jitter). */
  webhookRetryDelaysMs: number[];
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: lets deliveries reach loopback and private addresses (dev, tests). */
  webhookAllowPrivateNetworks: boolean;
  /**
   * WEBHOOK_POLL_INTERVAL_MS: how often a worker looks for due deliveries anyway: how retries
   * another process scheduled are found once due, and lanes of a worker that died once their
   * lease ends (webhooks/delivery/wake.ts).
   */
  webhookPollIntervalMs: number;
  /**
   * WEBHOOK_WAKE_INTERVAL_MS: on a deployment without change streams (a standalone mongod, the
   * embedded database), how often a worker looks for deliveries another process queued
   * (webhooks/delivery/wake.ts). One indexed read; a replica set needs none.
   */
  webhookWakeIntervalMs: number;
  /**
   * WEBHOOK_CONCURRENCY: the most endpoints one process delivers to at once (lanes running, see
   * webhooks/delivery/worker.ts). 100 by default.
   */
  webhookConcurrency: number;
  /**
   * WEBHOOK_ENDPOINT_CONCURRENCY: the most attempts in flight to one endpoint across every
   * process of the deployment (one lane runs at a time, webhooks/delivery/lane-leases.ts). 10 by
   * default: a slow receiver holds one lane and at most this many connections.
   */
  webhookEndpointConcurrency: number;
  /**
   * WEBHOOK_FAILING_AFTER: the consecutive failed delivery that sends `webhook_endpoint.failing`,
   * once per streak (webhooks/endpoint-health.ts). 5 by default; below the 15 that disable.
   */
  webhookFailingAfter: number;
  /** The bounds on what a workspace can grow (docs/operations.md "Limits"). */
  limits: Limits;
  /** WEBHOOK_RECOVERY_PAGE_SIZE: events a recovery reads, checks and queues per round trip (1000). */
  webhookRecoveryPageSize: number;
  /**
   * WEBHOOK_RECOVERY_LOCK_MS: how long a recovery's worker may go without finishing a page before
   * another worker takes it over (a worker that died). 30 s by default.
   */
  webhookRecoveryLockMs: number;
  /** NODE_EXTRA_CA_CERTS: more CA certificates deliveries trust (how tests trust their receivers). */
  extraCaCertsFile: string | undefined;
  /**
   * SECRETS_ENCRYPTION_KEY: 32 random bytes (base64) that seal webhook signing secrets at rest
   * (platform/secret-box.ts); unset stores them in the clear, as before (docs/operations.md).
   */
  secretsEncryptionKey: Buffer | undefined;
  /** SECRETS_ENCRYPTION_OLD_KEYS: earlier keys (comma-separated), which still open what they sealed. */
  secretsEncryptionOldKeys: Buffer[];
  /**
   * CONSOLE_SESSION_TTL_MINUTES: how long a webhook console session lasts when its minting names
   * no `expires_in` (docs/console.md). 60 by default.
   */
  consoleSessionTtlMs: number;
  /**
   * CONSOLE_FRAME_ANCESTORS: the origins (`https://app.example.com`, space- or comma-separated)
   * whose pages may embed the console in an iframe; none by default (docs/console.md).
   */
  consoleFrameAncestors: string[];
}

/**
 * What one workspace can make the service hold or do at once; each refused request names its
 * setting (docs/operations.md "Limits").
 */
export interface Limits {
  /** WEBHOOK_ENDPOINTS_PER_WORKSPACE: every event is written once per endpoint. 100 by default. */
  endpointsPerWorkspace: number;
  /**
   * WEBHOOK_SECRETS_PER_ENDPOINT: live signing secrets (the current one and those in their grace
   * period); a rotation past it ends the oldest grace early. 5 by default, at most 16 (what
   * `@deskline/webhook-verifier` reads of one signature header).
   */
  secretsPerEndpoint: number;
  /** WEBHOOK_RECOVERIES_PER_ENDPOINT: recoveries of one endpoint queued or running at once. 1 by default. */
  recoveriesPerEndpoint: number;
}

/** The verifier reads at most this many `v1=` items of a signature header. */
const MAX_SIGNATURES = 16;

function limits(env: NodeJS.ProcessEnv): Limits {
  const secretsPerEndpoint = integer(env, "WEBHOOK_SECRETS_PER_ENDPOINT", 5, 1);
  if (secretsPerEndpoint > MAX_SIGNATURES) {
    throw new ConfigError(
      `WEBHOOK_SECRETS_PER_ENDPOINT must be at most ${MAX_SIGNATURES} (receivers read no more signatures), got ${secretsPerEndpoint}`,
    );
  }
  return {
    endpointsPerWorkspace: integer(env, "WEBHOOK_ENDPOINTS_PER_WORKSPACE", 100, 1),
    secretsPerEndpoint,
    recoveriesPerEndpoint: integer(env, "WEBHOOK_RECOVERIES_PER_ENDPOINT", 1, 1),
  };
}

export class ConfigError extends Error {}

/** Up to 4 retries after a delivery's first attempt. */
const MAX_RETRIES = 4;

/** WEBHOOK_RETRY_DELAYS by default: 1 min, 5 min, 30 min, 2 h (webhooks/delivery/retry-schedule.ts applies them). */
const DEFAULT_RETRY_DELAYS = "1m,5m,30m,2h";

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

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** WEBHOOK_FAILING_AFTER: 1 to 14, a warning before the 15th failure disables the endpoint. */
function failingAfter(env: NodeJS.ProcessEnv): number {
  const value = integer(env, "WEBHOOK_FAILING_AFTER", 5, 1);
  if (value >= 15)
    throw new ConfigError(`WEBHOOK_FAILING_AFTER must be below 15 (the failures that disable), got ${value}`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(env[name])}`);
}

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[]): T {
  const raw = text(env, name) ?? allowed[0];
  if (!allowed.includes(raw as T)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

function retryDelays(env: NodeJS.ProcessEnv): number[] {
  const raw = text(env, "WEBHOOK_RETRY_DELAYS") ?? DEFAULT_RETRY_DELAYS;
  try {
    return parseRetryDelays(raw);
  } catch (error) {
    throw new ConfigError(`WEBHOOK_RETRY_DELAYS: ${(error as Error).message}`);
  }
}

/** One 32-byte key in base64 (or base64url), as `openssl rand -base64 32` makes it. */
function secretsKey(name: string, raw: string): Buffer {
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) ? Buffer.from(raw, "base64") : Buffer.alloc(0);
  if (key.length !== 32) {
    throw new ConfigError(
      `${name} must be 32 random bytes in base64 (make one with \`openssl rand -base64 32\`), ` +
        `got ${key.length ? `${key.length} bytes` : "something that is not base64"}`,
    );
  }
  return key;
}

function secretsKeys(env: NodeJS.ProcessEnv): { current: Buffer | undefined; old: Buffer[] } {
  const raw = text(env, "SECRETS_ENCRYPTION_KEY");
  const current = raw ? secretsKey("SECRETS_ENCRYPTION_KEY", raw) : undefined;
  const oldText = text(env, "SECRETS_ENCRYPTION_OLD_KEYS");
  const old = (oldText ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => secretsKey("each of SECRETS_ENCRYPTION_OLD_KEYS", item));
  if (old.length && !current) {
    throw new ConfigError(
      "SECRETS_ENCRYPTION_OLD_KEYS needs SECRETS_ENCRYPTION_KEY: old keys only open secrets " +
        "while the current key seals them (docs/operations.md)",
    );
  }
  return { current, old };
}

/** CONSOLE_FRAME_ANCESTORS: origins only (scheme, host, port), as CSP's frame-ancestors takes them. */
function frameAncestors(env: NodeJS.ProcessEnv): string[] {
  const items = (text(env, "CONSOLE_FRAME_ANCESTORS") ?? "").split(/[\s,]+/).filter(Boolean);
  return items.map((item) => {
    const origin = URL.canParse(item) ? new URL(item).origin : "null";
    if (origin === "null" || origin !== item.replace(/\/$/, "") || !/^https?:/.test(origin)) {
      throw new ConfigError(
        `CONSOLE_FRAME_ANCESTORS takes origins like https://app.example.com, got ${JSON.stringify(item)}`,
      );
    }
    return origin;
  });
}

/** MONGODB_URI, required where DESKLINE_EMBEDDED_DB=off, with what to do about it. */
function mongodbUri(env: NodeJS.ProcessEnv, embedded: EmbeddedDatabaseChoice): string | undefined {
  const uri = text(env, "MONGODB_URI");
  if (!uri && embedded === "off") {
    throw new ConfigError(
      "MONGODB_URI is required: DESKLINE_EMBEDDED_DB=off (as in the container image) starts no " +
        "embedded database; set MONGODB_URI to your MongoDB replica set, e.g. " +
        "mongodb://mongo:27017/?replicaSet=rs0 (see compose.yaml)",
    );
  }
  return uri;
}

/**
 * DESKLINE_DATA_DIR, absolute. A relative one is taken from where the user typed the command:
 * pnpm runs `pnpm start` in apps/server but passes that place as INIT_CWD.
 */
function dataDir(env: NodeJS.ProcessEnv): string {
  const raw = text(env, "DESKLINE_DATA_DIR");
  if (!raw) return DEFAULT_DATA_DIR;
  return isAbsolute(raw) ? raw : resolve(text(env, "INIT_CWD") ?? process.cwd(), raw);
}

/**
 * The standard OpenTelemetry variables. Tracing is on only when an OTLP endpoint is given (and
 * OTEL_SDK_DISABLED is not true); gRPC is not offered: the server exports over HTTP.
 */
function telemetry(env: NodeJS.ProcessEnv): TelemetryConfig | undefined {
  if (flag(env, "OTEL_SDK_DISABLED", false)) return undefined;
  const tracesEndpoint = text(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpoint = text(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (!tracesEndpoint && !endpoint) return undefined;
  const tracesUrl = tracesEndpoint ?? `${endpoint?.replace(/\/+$/, "")}/v1/traces`;
  try {
    const url = new URL(tracesUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new ConfigError(
      `${tracesEndpoint ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"} must be an http(s) URL, got ${JSON.stringify(tracesEndpoint ?? endpoint)}`,
    );
  }
  const protocol = text(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? oneOf(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", OTLP_PROTOCOLS)
    : oneOf(env, "OTEL_EXPORTER_OTLP_PROTOCOL", OTLP_PROTOCOLS);
  const samplerName = oneOf(env, "OTEL_TRACES_SAMPLER", TRACE_SAMPLERS);
  const rawRatio = text(env, "OTEL_TRACES_SAMPLER_ARG");
  const ratio = rawRatio === undefined ? 1 : Number(rawRatio);
  if (!(ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got ${JSON.stringify(rawRatio)}`,
    );
  }
  const resourceAttributes: Record<string, string> = {};
  for (const item of (text(env, "OTEL_RESOURCE_ATTRIBUTES") ?? "").split(",")) {
    const at = item.indexOf("=");
    if (at <= 0) continue;
    const key = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    resourceAttributes[key] = safeDecode(value);
  }
  return {
    tracesUrl,
    protocol,
    serviceName: text(env, "OTEL_SERVICE_NAME") ?? "deskline-server",
    sampler: { name: samplerName, ratio },
    resourceAttributes,
  };
}

/** OTEL_RESOURCE_ATTRIBUTES values are percent-encoded; a stray `%` is kept as written. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const rateLimitPerSecond = integer(env, "RATE_LIMIT_PER_SECOND", 100);
  const embeddedDatabase = oneOf(env, "DESKLINE_EMBEDDED_DB", EMBEDDED_DATABASE_CHOICES);
  const secrets = secretsKeys(env);
  return {
    role: oneOf(env, "ROLE", ROLES),
    port: integer(env, "PORT", 3000),
    host: text(env, "HOST") ?? "127.0.0.1",
    mongodbUri: mongodbUri(env, embeddedDatabase),
    databaseName: text(env, "MONGODB_DATABASE") ?? "deskline",
    embeddedDatabase,
    dataDir: dataDir(env),
    adminToken: text(env, "ADMIN_TOKEN"),
    logLevel: text(env, "LOG_LEVEL") ?? "info",
    logFormat: oneOf(env, "LOG_FORMAT", LOG_FORMATS),
    telemetry: telemetry(env),
    metricsToken: text(env, "METRICS_TOKEN"),
    rateLimitPerSecond,
    rateLimitBurst: integer(env, "RATE_LIMIT_BURST", rateLimitPerSecond * 2),
    rateLimitShared: flag(env, "RATE_LIMIT_SHARED", true),
    apiKeyCacheMs: integer(env, "API_KEY_CACHE_MS", 1_000),
    idempotencyTtlMs: integer(env, "IDEMPOTENCY_TTL_HOURS", 24, 24) * 3_600_000,
    bodyLimitBytes: 1024 * 1024,
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10_000),
    eventRetentionMs: integer(env, "EVENT_RETENTION_DAYS", 30, 1) * 86_400_000,
    eventRelayIntervalMs: integer(env, "EVENT_RELAY_INTERVAL_MS", 30_000, 100),
    eventRelayImmediate: flag(env, "EVENT_RELAY_IMMEDIATE", true),
    syncSettleMs: integer(env, "SYNC_SETTLE_MS", 1_000),
    webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10_000, 1),
    webhookRetryDelaysMs: retryDelays(env),
    webhookAllowPrivateNetworks: flag(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
    webhookPollIntervalMs: integer(env, "WEBHOOK_POLL_INTERVAL_MS", 1_000, 10),
    webhookWakeIntervalMs: integer(env, "WEBHOOK_WAKE_INTERVAL_MS", 20, 1),
    webhookConcurrency: integer(env, "WEBHOOK_CONCURRENCY", 100, 1),
    webhookEndpointConcurrency: integer(env, "WEBHOOK_ENDPOINT_CONCURRENCY", 10, 1),
    webhookFailingAfter: failingAfter(env),
    limits: limits(env),
    webhookRecoveryPageSize: integer(env, "WEBHOOK_RECOVERY_PAGE_SIZE", 1000, 1),
    webhookRecoveryLockMs: integer(env, "WEBHOOK_RECOVERY_LOCK_MS", 30_000, 100),
    extraCaCertsFile: text(env, "NODE_EXTRA_CA_CERTS"),
    secretsEncryptionKey: secrets.current,
    secretsEncryptionOldKeys: secrets.old,
    consoleSessionTtlMs: integer(env, "CONSOLE_SESSION_TTL_MINUTES", 60, 1) * 60_000,
    consoleFrameAncestors: frameAncestors(env),
  };
}
