import { type Migration, rewriteInBatches } from "../platform/database/migrations.js";

/**
 * `disabled_reason` was a sentence ("disabled by the owner", "15 consecutive failed deliveries"),
 * which a client could only compare as text; it is now the code the `webhook_endpoint.disabled`
 * event gives as `reason` (docs/decisions.md, "Why an endpoint is disabled: a code"). Endpoints
 * disabled before keep their reason, as its code: the owner's pause by its sentence, any other
 * (the failures' sentence named the count of its time) as `consecutive_failures`.
 */
const OWNER_SENTENCE = "disabled by the owner";
const CODES = ["owner", "consecutive_failures"];

export const endpointsDisabledReasonCodes: Migration = {
  id: 6,
  name: "endpoints-disabled-reason-codes",
  async up(db) {
    const endpoints = db.collection<{ _id: string; disabled_reason: string | null }>("webhook_endpoints");
    const sentences = { disabled_reason: { $type: "string" as const, $nin: CODES } };
    await rewriteInBatches(endpoints, sentences, async (docs) => {
      await endpoints.bulkWrite(
        docs.map(({ _id, disabled_reason }) => ({
          updateOne: {
            filter: { _id, disabled_reason },
            update: {
              $set: {
                disabled_reason: disabled_reason === OWNER_SENTENCE ? "owner" : "consecutive_failures",
              },
            },
          },
        })),
        { ordered: false },
      );
    });
  },
};
