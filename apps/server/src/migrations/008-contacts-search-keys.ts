import { type Migration, rewriteInBatches } from "../platform/database/migrations.js";
import { searchKeysOf } from "../platform/search-keys.js";

/**
 * Contacts stored before `search` read word prefixes get their `search_keys` (docs/decisions.md,
 * "Search by word prefix"): the prefixes of the words of their name and email and of their
 * phone's digits, as a write makes them. After migration 7, so a phone's E.164 digits are there.
 * Each update is conditional on the fields it read, so a contact changed meanwhile is read again
 * in a later batch rather than given keys of its old values. Written as "contacts without
 * `search_keys`", so a rerun goes on from there. The contact did not change: no new `version`,
 * `updated_at` or event.
 */
interface StoredContact {
  _id: string;
  name: string;
  email?: string | null;
  phone?: string | null;
  phone_e164?: string | null;
}

export const contactsSearchKeys: Migration = {
  id: 8,
  name: "contacts-search-keys",
  async up(db) {
    const contacts = db.collection<StoredContact>("contacts");
    const old = { search_keys: { $exists: false } };
    await rewriteInBatches(contacts, old, async (docs) => {
      const updates = docs.map(({ _id, name, email = null, phone = null, phone_e164 = null }) => {
        const keys = searchKeysOf({ texts: [name, email], phones: [{ phone, e164: phone_e164 }] });
        // null also matches a field the contact does not have.
        const read = { _id, name, email, phone, phone_e164 };
        return { updateOne: { filter: { ...read, ...old }, update: { $set: { search_keys: keys } } } };
      });
      await contacts.bulkWrite(updates, { ordered: false });
    });
  },
};
