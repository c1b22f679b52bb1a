import type { Db } from "mongodb";
import { type Migration, replaceIndexes, rewriteInBatches } from "../platform/database/migrations.js";

/**
 * The one-pending-delivery rule was a sparse unique index on `pending_key` alone (`one_pending`),
 * which a settled delivery left out by having no key. It now leads with the workspace
 * (`{workspace_id, pending_key}`, so a sharded cluster can keep it), and a compound index is
 * sparse only when every field is missing, so each settled delivery carries a key of its own,
 * `settled <_id>` (webhooks/deliveries/store.ts). The new index is built before the old one goes, so
 * the rule holds throughout (the API serves while migrations run). The queue's indexes before it
 * ordered by event (`endpoint_due`, `due`) go too; the current ones are created at start.
 */
export const keySettledDeliveries: Migration = {
  id: 2,
  name: "key-settled-deliveries",
  async up(db) {
    // Keys first: the new index cannot be built while settled deliveries share a missing key.
    await keyUnkeyed(db);
    await replaceIndexes(
      db,
      "webhook_deliveries",
      {
        key: { workspace_id: 1, pending_key: 1 },
        options: { name: "one_pending_in_workspace", unique: true },
      },
      ["one_pending", "endpoint_due", "due"],
    );
  },
};

async function keyUnkeyed(db: Db): Promise<void> {
  const deliveries = db.collection<{ _id: string; pending_key?: string }>("webhook_deliveries");
  await rewriteInBatches(deliveries, { pending_key: { $exists: false } }, async (docs) => {
    await deliveries.bulkWrite(
      docs.map(({ _id }) => ({
        updateOne: {
          filter: { _id, pending_key: { $exists: false } },
          update: { $set: { pending_key: `settled ${_id}` } },
        },
      })),
      { ordered: false },
    );
  });
}
