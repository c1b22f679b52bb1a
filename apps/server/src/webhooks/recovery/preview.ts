import type { Schema } from "../../spec/types.js";
import type { WebhookEndpointDoc } from "../endpoints/document.js";
import { judgePage, readPage, type SkippedReason } from "./missed.js";
import type { RecoveryWindow } from "./resend.js";
import type { RecoveryStores } from "./store.js";

/**
 * `recoverWebhookEndpoint` with `dry_run`: the window judged page by page as the job judges it
 * (missed.ts), counted instead of queued, in the request. It reads what a recovery would read,
 * so its cost grows with the window like the job's (docs/decisions.md, "Recoveries send only
 * what was missed").
 */
export async function previewRecovery(
  store: RecoveryStores,
  endpoint: WebhookEndpointDoc,
  window: RecoveryWindow,
): Promise<Schema<"WebhookRecoveryPreview">> {
  const { pageSize } = store.webhookRecoveries.job;
  const wouldQueue = { total: 0, failed: 0, dropped: 0, never_sent: 0 };
  const skipped: Record<SkippedReason, number> = {
    succeeded: 0,
    pending: 0,
    before_subscription: 0,
    filtered: 0,
  };
  const scope = { workspaceId: endpoint.workspace_id, ...window };
  for (let cursor = ""; ; ) {
    const page = await readPage(store, scope, endpoint, cursor, pageSize);
    if (page.length === 0) break;
    const verdict = await judgePage(store, endpoint, page);
    for (const { reason } of verdict.missed) wouldQueue[reason]++;
    wouldQueue.total += verdict.missed.length;
    for (const reason of Object.keys(skipped) as SkippedReason[]) skipped[reason] += verdict.skipped[reason];
    cursor = page.at(-1)?._id ?? cursor;
    if (page.length < pageSize) break;
  }
  return {
    object: "webhook_recovery_preview",
    endpoint_id: endpoint._id,
    since: window.since.toISOString(),
    until: window.until.toISOString(),
    would_queue: wouldQueue,
    skipped,
  };
}
