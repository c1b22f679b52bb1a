import { gathered } from "../../platform/database/gather.js";
import type { DeliveryAttemptInput } from "../deliveries/attempts.js";
import type { DeliveryOutcome } from "../deliveries/store.js";
import type { WebhookStores } from "../stores.js";

/**
 * How lanes record what their batches did: lanes that finish at about the same time (a fan-out
 * ends a hundred at once) write together, one `bulkWrite` of outcomes and one `insertMany` of
 * attempts for all of them (group commit, platform/database/gather.ts), so recording costs a
 * round trip per wave of lanes, not per lane.
 */

export interface BatchRecord {
  outcomes: Array<{ id: string; holder: string; outcome: DeliveryOutcome }>;
  attempts: DeliveryAttemptInput[];
}

/**
 * Records one lane's batch, gathered with the others'; resolves to how many of its outcomes
 * applied, or null when some outcome of the gathered write did not (a lease taken over: which
 * lane's is not told apart).
 */
export type Recorder = (batch: BatchRecord) => Promise<number | null>;

export function gatheredRecorder(
  store: Pick<WebhookStores, "webhookDeliveries" | "deliveryAttempts">,
): Recorder {
  return gathered(async (batches: BatchRecord[]) => {
    const outcomes = batches.flatMap((b) => b.outcomes);
    const attempts = batches.flatMap((b) => b.attempts);
    const [, applied] = await Promise.all([
      attempts.length > 0 ? store.deliveryAttempts.insertOnce(attempts) : undefined,
      store.webhookDeliveries.recordOutcomes(outcomes),
    ]);
    return batches.map((b) => (applied === outcomes.length ? b.outcomes.length : null));
  });
}
