import type { Agenda } from "agenda";
import { idTime } from "../../platform/ids.js";
import type { Logger } from "../../platform/logger.js";
import type { DeliveryRequest } from "../deliveries/queue.js";
import type { WebhookEndpointDoc } from "../endpoints/store.js";
import { type EventRef, judgePage, readPage } from "./missed.js";
import type { RecoveryProgress, RecoveryStores, WebhookRecoveryDoc } from "./store.js";

/**
 * A recovery as an Agenda job (docs/decisions.md "Recoveries run as jobs"): `recoverWebhookEndpoint`
 * records the recovery and schedules this job; a worker (ROLE worker or all) pages through the
 * window in event id order, a page at a time, asking only about that page's deliveries to the
 * endpoint, and queues the events it missed (missed.ts) through the one delivery queue. Memory holds one page, whatever the window. After each page the recovery document
 * records where it is; a worker that dies mid-way leaves its job locked until the lock lapses,
 * and the next worker goes on after the last page recorded (a page queued but not recorded is
 * looked at again: its events now have pending deliveries, so nothing is queued twice).
 */

export const RECOVERY_JOB = "webhook-recovery";

/** Recoveries one process runs at once (delivery's Agenda runs nothing else, webhooks/delivery/worker.ts). */
export const RECOVERY_CONCURRENCY = 1;

interface RecoveryData {
  recovery_id: string;
}

/**
 * The hook delivery's Agenda calls (webhooks/delivery/worker.ts): every role schedules recoveries
 * through `agenda`; workers (`processes`) also run them.
 */
export function attachRecoveryJob(
  agenda: Agenda,
  store: RecoveryStores,
  logger: Logger,
  processes: boolean,
): void {
  const { pageSize, lockMs } = store.webhookRecoveries.job;
  store.webhookRecoveries.attachScheduler(async (recoveryId) => {
    await agenda
      .create<RecoveryData>(RECOVERY_JOB, { recovery_id: recoveryId })
      .unique({ "data.recovery_id": recoveryId }, { insertOnly: true })
      .schedule(new Date())
      .save();
  });
  if (!processes) return;
  agenda.define<RecoveryData>(
    RECOVERY_JOB,
    async (job) => {
      try {
        await runRecovery(store, job.attrs.data.recovery_id, pageSize, () => job.touch());
      } catch (err) {
        // The database went away mid-way: run again soon, from the last page recorded.
        logger.warn(
          { err, recoveryId: job.attrs.data.recovery_id },
          "webhook recovery stopped; running it again",
        );
        job.schedule(new Date(Date.now() + 1_000));
      }
    },
    { concurrency: RECOVERY_CONCURRENCY, lockLimit: RECOVERY_CONCURRENCY, lockLifetime: lockMs },
  );
}

/** Runs (or resumes) one recovery to its end. */
export async function runRecovery(
  store: RecoveryStores,
  recoveryId: string,
  pageSize: number,
  keepAlive: () => Promise<unknown> = async () => {},
): Promise<void> {
  const recovery = await store.webhookRecoveries.find(recoveryId);
  if (!recovery || recovery.status === "succeeded") return;
  const endpoint = await store.webhookEndpoints.find(recovery.endpoint_id);
  // Deleted meanwhile: nothing left to deliver to.
  if (!endpoint) return store.webhookRecoveries.succeeded(recoveryId);
  await store.webhookRecoveries.running(recoveryId);
  let progress: RecoveryProgress = {
    cursor: recovery.cursor ?? "",
    scanned: recovery.scanned,
    queued: recovery.queued,
    lastDue: recovery.last_due,
  };
  for (;;) {
    const window = { workspaceId: recovery.workspace_id, since: recovery.since, until: recovery.until };
    const page = await readPage(store, window, endpoint, progress.cursor, pageSize);
    if (page.length === 0) break;
    progress = await queueMissed(store, recovery, endpoint, page, progress);
    await store.webhookRecoveries.progressed(recoveryId, progress);
    await keepAlive();
    if (page.length < pageSize) break;
  }
  await store.webhookRecoveries.succeeded(recoveryId);
}

/**
 * Queues the page's missed events (missed.ts). Due at their event's time (in the past), so the
 * lane sends them oldest event first (the queue breaks ties by event id); each due time is also
 * kept strictly after the one before, across pages and resumed runs (`lastDue`), so a page
 * queued later never sorts before one queued earlier.
 */
async function queueMissed(
  store: RecoveryStores,
  recovery: WebhookRecoveryDoc,
  endpoint: WebhookEndpointDoc,
  page: EventRef[],
  progress: RecoveryProgress,
): Promise<RecoveryProgress> {
  const verdict = await judgePage(store, endpoint, page);
  let lastDue = progress.lastDue;
  const dueAt = ({ event }: DeliveryRequest) => {
    lastDue = Math.max(idTime(event._id), lastDue + 1);
    return new Date(lastDue);
  };
  const made = await store.deliveryQueue.queue(
    verdict.missed.map(({ event }) => ({ event, endpointId: recovery.endpoint_id })),
    { origin: "recover", recoveryId: recovery._id, dueAt },
  );
  return {
    cursor: page.at(-1)?._id ?? progress.cursor,
    scanned: progress.scanned + page.length,
    // Queued by this recovery in a run that died before recording the page: counted as queued.
    queued: progress.queued + made.length + verdict.queuedBy(recovery._id),
    lastDue,
  };
}
