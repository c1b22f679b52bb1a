import type { Db } from "mongodb";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { ApiKeys } from "./api-keys.js";
import { Contacts } from "./contacts.js";
import { Conversations } from "./conversations.js";
import { DeliveryAttempts } from "./delivery-attempts.js";
import { DeliveryQueue } from "./delivery-queue.js";
import { Events } from "./events.js";
import { IdempotencyKeys } from "./idempotency.js";
import { Messages } from "./messages.js";
import { EventRelay } from "./outbox.js";
import { RateLimits } from "./rate-limits.js";
import { SecretBox } from "./secret-box.js";
import { Tickets } from "./tickets.js";
import { Tombstones } from "./tombstones.js";
import { WebhookDeliveries } from "./webhook-deliveries.js";
import { useSecretBox, WebhookEndpoints } from "./webhook-endpoints.js";
import { Workspaces } from "./workspaces.js";

/** Every collection module, built over one database. */
export interface Store {
  db: Db;
  workspaces: Workspaces;
  apiKeys: ApiKeys;
  contacts: Contacts;
  conversations: Conversations;
  messages: Messages;
  tickets: Tickets;
  idempotencyKeys: IdempotencyKeys;
  webhookEndpoints: WebhookEndpoints;
  events: Events;
  /** Deleted contacts and tickets, for incremental pulls (db/tombstones.ts). */
  tombstones: Tombstones;
  deliveryAttempts: DeliveryAttempts;
  /** The API keys' token buckets, shared by the API processes (db/rate-limits.ts). */
  rateLimits: RateLimits;
  /** One document per delivery (event × endpoint × queueing), and the queue: db/webhook-deliveries.ts. */
  webhookDeliveries: WebhookDeliveries;
  /** Queues deliveries: records them, then schedules their endpoints' lanes (db/delivery-queue.ts). */
  deliveryQueue: DeliveryQueue;
  /** Moves events from the documents that record them into `events` (db/outbox.ts). */
  relay: EventRelay;
}

export function createStore(
  db: Db,
  config: Pick<
    Config,
    | "idempotencyTtlMs"
    | "eventRelayImmediate"
    | "apiKeyCacheMs"
    | "secretsEncryptionKey"
    | "secretsEncryptionOldKeys"
    | "eventRetentionMs"
  >,
  logger: Logger,
): Store {
  // One process, one environment, one set of keys: deliveries open secrets with it too.
  const secretBox = new SecretBox(config.secretsEncryptionKey, config.secretsEncryptionOldKeys);
  useSecretBox(secretBox);
  const events = new Events(db, config.eventRetentionMs);
  const relay = new EventRelay(db, events, { immediate: config.eventRelayImmediate, logger });
  const tombstones = new Tombstones(db);
  const contacts = new Contacts(db, relay, tombstones);
  const messages = new Messages(db, relay);
  const conversations = new Conversations(db, { contacts, messages }, relay);
  const webhookDeliveries = new WebhookDeliveries(db);
  const deliveryQueue = new DeliveryQueue(webhookDeliveries);
  return {
    db,
    workspaces: new Workspaces(db),
    apiKeys: new ApiKeys(db, { cacheMs: config.apiKeyCacheMs }),
    contacts,
    conversations,
    messages,
    tickets: new Tickets(db, { contacts, conversations }, relay, tombstones),
    idempotencyKeys: new IdempotencyKeys(db, config.idempotencyTtlMs, secretBox),
    webhookEndpoints: new WebhookEndpoints(db, secretBox),
    events,
    tombstones,
    deliveryAttempts: new DeliveryAttempts(db),
    rateLimits: new RateLimits(db),
    webhookDeliveries,
    deliveryQueue,
    relay,
  };
}

export async function ensureIndexes(store: Store): Promise<void> {
  await store.workspaces.ensureIndexes();
  await store.apiKeys.ensureIndexes();
  await store.contacts.ensureIndexes();
  await store.tickets.ensureIndexes();
  await store.conversations.ensureIndexes();
  await store.messages.ensureIndexes();
  await store.idempotencyKeys.ensureIndexes();
  await store.webhookEndpoints.ensureIndexes();
  await store.events.ensureIndexes();
  await store.tombstones.ensureIndexes();
  await store.relay.ensureIndexes();
  await store.deliveryAttempts.ensureIndexes();
  await store.webhookDeliveries.ensureIndexes();
}
