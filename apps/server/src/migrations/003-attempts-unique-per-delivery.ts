import { type Migration, replaceIndexes } from "../platform/database/migrations.js";

/**
 * Attempts were unique per event, endpoint and attempt number (`one_per_attempt`), which refused
 * the attempts of a resend or a recovery of an event already delivered. They are now unique per
 * delivery and attempt number, workspace first (`one_per_delivery_attempt`), built here before the
 * old one goes. Every stored attempt already names its delivery, so no document changes.
 */
export const attemptsUniquePerDelivery: Migration = {
  id: 3,
  name: "attempts-unique-per-delivery",
  async up(db) {
    await replaceIndexes(
      db,
      "delivery_attempts",
      {
        key: { workspace_id: 1, delivery_id: 1, attempt: 1 },
        options: { name: "one_per_delivery_attempt", unique: true },
      },
      ["one_per_attempt"],
    );
  },
};
