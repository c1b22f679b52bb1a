import { type Migration, rewriteInBatches } from "../platform/database/migrations.js";

/**
 * Endpoints stored before endpoints had custom headers have no `custom_headers` field; every
 * endpoint now has one (empty when it sends none), so the code reads it without a default and the
 * start-up check of the stored secrets needs no "missing" case (webhooks/endpoints/reseal.ts).
 */
export const endpointsHaveCustomHeaders: Migration = {
  id: 5,
  name: "endpoints-have-custom-headers",
  async up(db) {
    const endpoints = db.collection<{ _id: string; custom_headers?: unknown[] }>("webhook_endpoints");
    const missing = { custom_headers: { $exists: false } };
    await rewriteInBatches(endpoints, missing, async (docs) => {
      await endpoints.bulkWrite(
        docs.map(({ _id }) => ({
          updateOne: { filter: { _id, ...missing }, update: { $set: { custom_headers: [] } } },
        })),
        { ordered: false },
      );
    });
  },
};
