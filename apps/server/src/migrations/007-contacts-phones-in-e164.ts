import { type Migration, rewriteInBatches } from "../platform/database/migrations.js";
import { parsePhone } from "../platform/phone-numbers.js";

/**
 * Contacts stored before phones were read into E.164 get their `phone_e164` and `phone_country`
 * (docs/decisions.md, "Phones in E.164"), read in their workspace's `default_phone_country` (none
 * for a workspace that never set one: then only numbers written with `+` read). A number that does
 * not read is kept as it was, with `phone_e164` null (as a lenient workspace keeps one), and
 * reported: how many, and the contacts' ids, never the numbers (a log is no place for them).
 * Written as "contacts that have a phone and no `phone_e164` yet", so a rerun goes on from there.
 */
interface StoredContact {
  _id: string;
  workspace_id: string;
  phone: string;
  phone_e164?: string | null;
}

/** How many ids one report line names at most; the count is always whole. */
const IDS_REPORTED = 1000;

export const contactsPhonesInE164: Migration = {
  id: 7,
  name: "contacts-phones-in-e164",
  async up(db, logger) {
    const contacts = db.collection<StoredContact>("contacts");
    const workspaces = db.collection<{ _id: string; default_phone_country?: string | null }>("workspaces");
    const countries = new Map<string, string | null>();
    const countryOf = async (workspaceId: string) => {
      if (!countries.has(workspaceId)) {
        const workspace = await workspaces.findOne({ _id: workspaceId });
        countries.set(workspaceId, workspace?.default_phone_country ?? null);
      }
      return countries.get(workspaceId) ?? null;
    };
    const unread: string[] = [];
    let unreadCount = 0;
    const old = { phone: { $type: "string" as const }, phone_e164: { $exists: false } };
    const total = await rewriteInBatches(contacts, old, async (docs) => {
      const updates = [];
      for (const { _id, workspace_id, phone } of docs) {
        const parsed = parsePhone(phone, await countryOf(workspace_id));
        if (!parsed) {
          unreadCount++;
          if (unread.length < IDS_REPORTED) unread.push(_id);
        }
        const set = { phone_e164: parsed?.e164 ?? null, phone_country: parsed?.country ?? null };
        updates.push({ updateOne: { filter: { _id, ...old, phone }, update: { $set: set } } });
      }
      await contacts.bulkWrite(updates, { ordered: false });
    });
    if (unreadCount > 0) {
      logger.warn(
        { migration: "contacts-phones-in-e164", contacts: total, unread: unreadCount, contact_ids: unread },
        `${unreadCount} of ${total} stored phone numbers do not read as phone numbers; kept as given, with phone_e164 null`,
      );
    }
  },
};
