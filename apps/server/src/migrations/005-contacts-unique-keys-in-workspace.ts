import type { Db } from "mongodb";
import { type Migration, replaceIndexes } from "../platform/database/migrations.js";

/**
 * A contact's email and external ids were unique through a sparse unique index on `unique_keys`
 * alone; it now leads with the workspace (`{workspace_id, unique_keys}`, so a sharded cluster can
 * keep it). A compound index is sparse only when every field is missing, and `workspace_id` never
 * is, so contacts without an email or external id would all collide on "no key": each contact now
 * lists a key of its own as well (contacts/unique-keys.ts `ownKey`, the same text as here: a
 * migration keeps its own copy, as the code it upgrades from may change). Keys first, then the new
 * index, then the old one goes: an email stays unique throughout (the API serves meanwhile).
 */
export const contactsUniqueKeysInWorkspace: Migration = {
  id: 5,
  name: "contacts-unique-keys-in-workspace",
  async up(db) {
    await addOwnKeys(db);
    await replaceIndexes(
      db,
      "contacts",
      { key: { workspace_id: 1, unique_keys: 1 }, options: { name: "workspace_unique_keys", unique: true } },
      ["unique_keys"],
    );
  },
};

interface ContactKeys {
  _id: string;
  workspace_id: string;
  unique_keys?: string[];
}

/** Gives every contact that lacks it its own key, first in its list; a run cut short goes on. */
async function addOwnKeys(db: Db): Promise<void> {
  const contacts = db.collection<ContactKeys>("contacts");
  const ownKey = (doc: ContactKeys) => JSON.stringify([doc.workspace_id, "contact", doc._id]);
  const batch: ContactKeys[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await contacts.bulkWrite(
      batch.splice(0).map((doc) => ({
        updateOne: {
          filter: { _id: doc._id },
          update: { $set: { unique_keys: [ownKey(doc), ...(doc.unique_keys ?? [])] } },
        },
      })),
      { ordered: false },
    );
  };
  const all = contacts.find({}, { projection: { _id: 1, workspace_id: 1, unique_keys: 1 } });
  for await (const doc of all) {
    if (doc.unique_keys?.[0] === ownKey(doc)) continue;
    batch.push(doc);
    if (batch.length >= 1000) await flush();
  }
  await flush();
}
