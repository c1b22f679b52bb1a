import type { Db } from "mongodb";

/**
 * The collection Agenda keeps the delivery jobs in (delivery/agenda.ts). Agenda owns its
 * documents; this module only names it and makes the index Agenda's lock query needs, with the
 * other indexes (Agenda's own index creation is off, see delivery/agenda.ts).
 */
export const DELIVERY_JOBS_COLLECTION = "agenda_jobs";

export async function ensureDeliveryJobIndexes(db: Db): Promise<void> {
  await db
    .collection(DELIVERY_JOBS_COLLECTION)
    .createIndex(
      { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 },
      { name: "findAndLockNextJobIndex" },
    );
}
