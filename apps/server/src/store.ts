import type { Db } from "mongodb";
import type { Config } from "./config.js";
import { ConsoleSessions } from "./console/sessions.js";
import { Contacts } from "./contacts/contacts.js";
import { CustomFieldDefinitions } from "./contacts/custom-field-definitions.js";
import { Conversations } from "./conversations/conversations.js";
import { Messages } from "./conversations/messages.js";
import { Events } from "./events/events.js";
import { EventRelay } from "./events/outbox-relay.js";
import { MIGRATIONS } from "./migrations/index.js";
import { type Clock, systemClock } from "./platform/clock.js";
import { type MigrateReport, runMigrations } from "./platform/database/migrations.js";
import { IdempotencyKeys } from "./platform/idempotency/idempotency-keys.js";
import type { Logger } from "./platform/logger.js";
import { RateLimits } from "./platform/rate-limit/rate-limits.js";
import { SecretBox } from "./platform/secret-box.js";
import { Tombstones } from "./records/tombstones.js";
import { Tickets } from "./tickets/tickets.js";
import { DeliveryAttempts } from "./webhooks/deliveries/attempts.js";
import { DeliveryQueue } from "./webhooks/deliveries/queue.js";
import { toWebhookDelivery, WebhookDeliveries } from "./webhooks/deliveries/store.js";
import { FilteredCounts } from "./webhooks/endpoints/filtered.js";
import { SecretsAtRest } from "./webhooks/endpoints/secrets/at-rest.js";
import { WebhookEndpoints } from "./webhooks/endpoints/store.js";
import { WebhookRecoveries } from "./webhooks/recovery/store.js";
import { ApiKeys } from "./workspaces/api-keys.js";
import { Workspaces } from "./workspaces/workspaces.js";

/** Every collection module, built over one database. */
export interface Store {
  db: Db;
  /** The process's keys: every stored secret is sealed and opened there. */
  secrets: SecretsAtRest;
  workspaces: Workspaces;
  apiKeys: ApiKeys;
  contacts: Contacts;
  /** The workspaces' typed custom fields, and their contact indexes (contacts/custom-field-definitions.ts). */
  customFieldDefinitions: CustomFieldDefinitions;
  conversations: Conversations;
  messages: Messages;
  tickets: Tickets;
  idempotencyKeys: IdempotencyKeys;
  webhookEndpoints: WebhookEndpoints;
  /** What endpoints' content filters kept from them, per hour (webhooks/endpoints/filtered.ts). */
  webhookFiltered: FilteredCounts;
  events: Events;
  /** Deleted contacts and tickets, for incremental pulls (records/tombstones.ts). */
  tombstones: Tombstones;
  deliveryAttempts: DeliveryAttempts;
  /** The API keys' token buckets, shared by the API processes (platform/rate-limit/rate-limits.ts). */
  rateLimits: RateLimits;
  /** One document per delivery (event × endpoint × queueing), and the queue: webhooks/deliveries/store.ts. */
  webhookDeliveries: WebhookDeliveries;
  /** Queues deliveries: records them, then schedules their endpoints' lanes (webhooks/deliveries/queue.ts). */
  deliveryQueue: DeliveryQueue;
  /** Recoveries and their progress; a job runs each (webhooks/recovery/job.ts). */
  webhookRecoveries: WebhookRecoveries;
  /** Moves events from the documents that record them into `events` (events/outbox-relay.ts). */
  relay: EventRelay;
  /** The webhook console's sessions (console/sessions.ts). */
  consoleSessions: ConsoleSessions;
}

export function createStore(
  db: Db,
  config: Pick<
    Config,
    | "idempotencyTtlMs"
    | "eventRelayImmediate"
    | "apiKeyCacheMs"
    | "customFieldCacheMs"
    | "secretsEncryptionKey"
    | "secretsEncryptionOldKeys"
    | "eventRetentionMs"
    | "webhookFailingAfter"
    | "limits"
    | "webhookRecoveryPageSize"
    | "webhookRecoveryLockMs"
  >,
  logger: Logger,
  /**
   * What queued deliveries are due by and the rate limit's sweep calls a bucket full by: the
   * database's clock in a server (server.ts).
   */
  clock: Clock = systemClock,
): Store {
  // One process, one environment, one set of keys: every seal and open of a stored secret goes
  // through this one object (webhooks/endpoints/secrets/at-rest.ts).
  const secrets = new SecretsAtRest(
    new SecretBox(config.secretsEncryptionKey, config.secretsEncryptionOldKeys),
  );
  const events = new Events(db, config.eventRetentionMs);
  const relay = new EventRelay(db, events, { immediate: config.eventRelayImmediate, logger });
  const tombstones = new Tombstones(db, relay);
  const contacts = new Contacts(db, relay, tombstones);
  const messages = new Messages(db, relay);
  const conversations = new Conversations(db, { contacts, messages }, relay);
  const webhookDeliveries = new WebhookDeliveries(db);
  const webhookEndpoints = new WebhookEndpoints(db, secrets, {
    relay,
    limits: config.limits,
    rules: { failingAfter: config.webhookFailingAfter },
    readDelivery: async (id) => {
      const doc = await webhookDeliveries.findById(id);
      return doc && toWebhookDelivery(doc);
    },
  });
  const webhookFiltered = new FilteredCounts(db);
  const deliveryQueue = new DeliveryQueue(webhookDeliveries, webhookEndpoints, {
    clock,
    filtered: webhookFiltered,
    logger,
  });
  return {
    db,
    secrets,
    workspaces: new Workspaces(db),
    apiKeys: new ApiKeys(db, { cacheMs: config.apiKeyCacheMs }),
    contacts,
    customFieldDefinitions: new CustomFieldDefinitions(db, { cacheMs: config.customFieldCacheMs }),
    conversations,
    messages,
    tickets: new Tickets(db, { contacts, conversations }, relay, tombstones),
    idempotencyKeys: new IdempotencyKeys(db, config.idempotencyTtlMs, secrets.answers),
    webhookEndpoints,
    webhookFiltered,
    events,
    tombstones,
    deliveryAttempts: new DeliveryAttempts(db),
    rateLimits: new RateLimits(db, clock),
    webhookDeliveries,
    deliveryQueue,
    webhookRecoveries: new WebhookRecoveries(db, {
      perEndpoint: config.limits.recoveriesPerEndpoint,
      pageSize: config.webhookRecoveryPageSize,
      lockMs: config.webhookRecoveryLockMs,
    }),
    relay,
    consoleSessions: new ConsoleSessions(db),
  };
}

/**
 * Brings the database up to this version: the migrations it has not run yet (under their lock,
 * platform/database/migrations.ts, timed by `clock`: the database's time when none is given),
 * then every collection's indexes. Each start runs it, and
 * `deskline-server migrate`.
 */
export async function prepareDatabase(store: Store, logger: Logger, clock?: Clock): Promise<MigrateReport> {
  const report = await runMigrations(store.db, MIGRATIONS, { logger, ...(clock && { clock }) });
  await ensureIndexes(store);
  return report;
}

export async function ensureIndexes(store: Store): Promise<void> {
  await store.workspaces.ensureIndexes();
  await store.apiKeys.ensureIndexes();
  await store.contacts.ensureIndexes();
  await store.customFieldDefinitions.ensureIndexes();
  await store.tickets.ensureIndexes();
  await store.conversations.ensureIndexes();
  await store.messages.ensureIndexes();
  await store.idempotencyKeys.ensureIndexes();
  await store.webhookEndpoints.ensureIndexes();
  await store.webhookFiltered.ensureIndexes();
  await store.events.ensureIndexes();
  await store.tombstones.ensureIndexes();
  await store.relay.ensureIndexes();
  await store.deliveryAttempts.ensureIndexes();
  await store.webhookDeliveries.ensureIndexes();
  await store.consoleSessions.ensureIndexes();
  await store.webhookRecoveries.ensureIndexes();
}
