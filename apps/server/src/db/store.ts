import type { Db } from "mongodb";
import { ApiKeys } from "./api-keys.js";
import { Contacts } from "./contacts.js";
import { Conversations } from "./conversations.js";
import { IdempotencyKeys } from "./idempotency.js";
import { Tickets } from "./tickets.js";
import { Workspaces } from "./workspaces.js";

/** Every collection module, built over one database. */
export interface Store {
  db: Db;
  workspaces: Workspaces;
  apiKeys: ApiKeys;
  contacts: Contacts;
  conversations: Conversations;
  tickets: Tickets;
  idempotencyKeys: IdempotencyKeys;
}

export function createStore(db: Db, options: { idempotencyTtlMs: number }): Store {
  const contacts = new Contacts(db);
  const conversations = new Conversations(db);
  return {
    db,
    workspaces: new Workspaces(db),
    apiKeys: new ApiKeys(db),
    contacts,
    conversations,
    tickets: new Tickets(db, { contacts, conversations }),
    idempotencyKeys: new IdempotencyKeys(db, options.idempotencyTtlMs),
  };
}

export async function ensureIndexes(store: Store): Promise<void> {
  await store.workspaces.ensureIndexes();
  await store.apiKeys.ensureIndexes();
  await store.contacts.ensureIndexes();
  await store.tickets.ensureIndexes();
  await store.idempotencyKeys.ensureIndexes();
}
