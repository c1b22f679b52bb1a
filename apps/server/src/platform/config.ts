/**
 * The platform's settings: the process (role, listening, shutdown), the database, the HTTP chain,
 * logs and the key that seals secrets. Declared once each (platform/settings.ts); config.ts at the
 * source root composes them with the capabilities' settings into the one `Config`.
 */

import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, custom, flag, integer, oneOf, settingGroup, text } from "./settings.js";

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

/** What a process does (docs/operations.md, "API and workers as separate processes"). */
export const ROLES = ["all", "api", "worker"] as const;
export type Role = (typeof ROLES)[number];

/** `auto` writes readable lines when stdout is a terminal and JSON lines otherwise. */
export const LOG_FORMATS = ["auto", "json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The process: what it does, where it listens, how long it takes to stop. */
export const serverSettings = settingGroup({
  role: oneOf("ROLE", ROLES, {
    doc: "`api` serves HTTP (and queues deliveries), `worker` delivers webhooks, `all` both",
  }),
  port: integer("PORT", { default: 3000, doc: "HTTP port (`0` picks a free one)" }),
  host: text("HOST", {
    default: "127.0.0.1",
    doc: "interface to listen on; `0.0.0.0` in a container or behind a load balancer",
  }),
  shutdownTimeoutMs: integer("SHUTDOWN_TIMEOUT_MS", {
    default: 10_000,
    doc: "how long SIGTERM waits for in-flight requests before closing their connections",
  }),
});

export type ServerSettings = ReturnType<typeof serverSettings.read>;

/** The database: a MongoDB deployment, or the embedded one and where it keeps its data. */
export const databaseSettings = settingGroup(
  {
    mongodbUri: text("MONGODB_URI", {
      accepts: "a MongoDB connection string",
      doc: "the MongoDB deployment (a replica set in production); unset starts the embedded database (kept in `DESKLINE_DATA_DIR`, or in memory with `--ephemeral`)",
    }),
    databaseName: text("MONGODB_DATABASE", {
      default: "deskline",
      doc: "database name; several deployments can share a MongoDB with different names",
    }),
    embeddedDatabase: oneOf("DESKLINE_EMBEDDED_DB", EMBEDDED_DATABASE_CHOICES, {
      doc: "without `MONGODB_URI` only: which embedded database starts; `auto` is a downloaded mongod if possible, else mongo-java-server; `off` starts none, so `MONGODB_URI` is required (the container image sets it)",
    }),
    dataDir: text("DESKLINE_DATA_DIR", {
      accepts: "a path",
      defaultDoc: "`.deskline/data` in the checkout",
      doc: "without `MONGODB_URI` only: where the embedded database keeps its data across restarts (mongod's files in `mongod/`, mongo-java-server's H2 file in `mongo-java-server/`), with `pnpm start`'s demo key (`demo-workspace.json`, 0600) and a lock against a second server; a relative path is taken from where the command was typed. Ignored with `--ephemeral` (in memory, nothing written)",
    }),
    initCwd: text("INIT_CWD", {
      accepts: "a path",
      defaultDoc: "set by pnpm and npm",
      doc: "not a setting of ours: the folder a `pnpm …` command was typed in, which pnpm passes to scripts that it runs elsewhere; a relative `DESKLINE_DATA_DIR` is taken from it (else from the process's working directory)",
    }),
  },
  {
    build: (values) => {
      const embeddedDatabase = values.embeddedDatabase;
      return {
        mongodbUri: mongodbUri(values.mongodbUri, embeddedDatabase),
        databaseName: values.databaseName,
        embeddedDatabase,
        dataDir: dataDir(values.dataDir, values.initCwd),
      };
    },
    alsoDocumented: [
      {
        env: "DESKLINE_CACHE_DIR",
        default: "`~/.cache/deskline`",
        accepts: "a path",
        doc: "where `scripts/install-mongo-java-server.sh` keeps the embedded fallback's jars (read by that script)",
      },
    ],
  },
);

export type DatabaseSettings = ReturnType<typeof databaseSettings.read>;

/** MONGODB_URI, required where DESKLINE_EMBEDDED_DB=off, with what to do about it. */
function mongodbUri(uri: string | undefined, embedded: EmbeddedDatabaseChoice): string | undefined {
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
function dataDir(raw: string | undefined, initCwd: string | undefined): string {
  if (!raw) return DEFAULT_DATA_DIR;
  return isAbsolute(raw) ? raw : resolve(initCwd ?? process.cwd(), raw);
}

/** The HTTP chain (platform/http/route-kit.ts): admin and metrics tokens, rate limits, idempotency. */
export const httpSettings = settingGroup(
  {
    adminToken: text("ADMIN_TOKEN", {
      doc: "bearer token of the admin API (`/admin/v1`, and its reference page `/admin/v1/docs`); unset turns the admin API off (404)",
    }),
    metricsToken: text("METRICS_TOKEN", {
      doc: "bearer token that `GET /metrics` requires; unset leaves `/metrics` open (then keep it off the internet)",
    }),
    rateLimitPerSecond: integer("RATE_LIMIT_PER_SECOND", {
      default: 100,
      doc: "token-bucket refill per API key, across all API processes; `0` turns rate limiting off",
    }),
    rateLimitBurst: integer("RATE_LIMIT_BURST", {
      default: undefined,
      defaultDoc: "2 × the rate",
      doc: "bucket size per API key",
    }),
    rateLimitShared: flag("RATE_LIMIT_SHARED", {
      default: true,
      doc: "the buckets live in MongoDB, shared by every API process; `false` keeps them in each process's memory (a key then gets the rate from each process: for a single API process, or a limit enforced at the load balancer)",
    }),
    idempotencyTtlMs: integer("IDEMPOTENCY_TTL_HOURS", {
      default: 24,
      min: 24,
      times: 3_600_000,
      doc: "how long an `Idempotency-Key` is remembered",
    }),
  },
  {
    build: (values) => ({
      ...values,
      rateLimitBurst: values.rateLimitBurst ?? values.rateLimitPerSecond * 2,
      /** The largest request body accepted (docs/operations.md "Limits": 1 MiB); not a setting. */
      bodyLimitBytes: 1024 * 1024,
    }),
  },
);

export type HttpSettings = ReturnType<typeof httpSettings.read>;

export const logSettings = settingGroup({
  logLevel: text("LOG_LEVEL", {
    default: "info",
    accepts: "`trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`",
    doc: "the least severe log lines written",
  }),
  logFormat: oneOf("LOG_FORMAT", LOG_FORMATS, {
    doc: "`auto`: readable lines when stdout is a terminal, JSON lines otherwise; `json` or `pretty` forces one",
  }),
});

export type LogSettings = ReturnType<typeof logSettings.read>;

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

/** The keys that seal secrets at rest (platform/secret-box.ts). */
export const secretSettings = settingGroup(
  {
    secretsEncryptionKey: custom("SECRETS_ENCRYPTION_KEY", {
      accepts: "32 bytes, base64",
      read: (raw) => secretsKey("SECRETS_ENCRYPTION_KEY", raw),
      doc: "32 random bytes in base64 (`openssl rand -base64 32`): webhook signing secrets, and the keys and secrets in stored idempotent answers, are stored encrypted with it (AES-256-GCM); unset stores signing secrets in the clear, as before, and logs so once at start. See [Secrets encryption key](#secrets-encryption-key)",
    }),
    secretsEncryptionOldKeys: custom("SECRETS_ENCRYPTION_OLD_KEYS", {
      accepts: "keys as above, comma-separated",
      unset: "",
      defaultDoc: "unset",
      read: (raw) =>
        raw
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item !== "")
          .map((item) => secretsKey("each of SECRETS_ENCRYPTION_OLD_KEYS", item)),
      doc: "earlier keys, comma-separated, same format: they still decrypt what they encrypted, until `deskline-server reencrypt-secrets` has moved everything to `SECRETS_ENCRYPTION_KEY`; needs `SECRETS_ENCRYPTION_KEY`",
    }),
  },
  {
    build: (values) => {
      const current = values.secretsEncryptionKey;
      const old = values.secretsEncryptionOldKeys;
      if (old.length && !current) {
        throw new ConfigError(
          "SECRETS_ENCRYPTION_OLD_KEYS needs SECRETS_ENCRYPTION_KEY: old keys only open secrets " +
            "while the current key seals them (docs/operations.md)",
        );
      }
      return { secretsEncryptionKey: current, secretsEncryptionOldKeys: old };
    },
  },
);

export type SecretSettings = ReturnType<typeof secretSettings.read>;
