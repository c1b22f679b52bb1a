import type { Db } from "mongodb";
import { ApiKeys } from "./api-keys.js";
import { Contacts } from "./contacts.js";
import { IdempotencyKeys } from "./idempotency.js";
import { Workspaces } from "./workspaces.js";

/** Every collection module, built over one database. */
export interface Store {
  db: Db;
  workspaces: Workspaces;
  apiKeys: ApiKeys;
  contacts: Contacts;
  idempotencyKeys: IdempotencyKeys;
}

export function createStore(db: Db, options: { idempotencyTtlMs: number }): Store {
  return {
    db,
    workspaces: new Workspaces(db),
    apiKeys: new ApiKeys(db),
    contacts: new Contacts(db),
    idempotencyKeys: new IdempotencyKeys(db, options.idempotencyTtlMs),
  };
}

export async function ensureIndexes(store: Store): Promise<void> {
  await store.workspaces.ensureIndexes();
  await store.apiKeys.ensureIndexes();
  await store.contacts.ensureIndexes();
  await store.idempotencyKeys.ensureIndexes();
}
