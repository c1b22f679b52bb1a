import { type StoredEvent, subscribedTypes } from "../../events/model.js";
import { idTime } from "../../platform/ids.js";
import type { WebhookEndpointDoc } from "../endpoints/document.js";
import { passesFilter } from "../endpoints/filter.js";
import { subscribedSince } from "../endpoints/subscriptions.js";
import type { RecoveryStores } from "./store.js";

/**
 * What a recovery sends, decided once for the job that queues (job.ts) and the preview that only
 * counts (preview.ts), so the preview's count is what a recovery queues: of a window's events
 * the endpoint subscribes to, those older than its subscription to their type are no miss, nor
 * those its content filter keeps from it; those with a pending or succeeded delivery are
 * covered, and the rest were missed, each for a reason
 * (docs/decisions.md, "Recoveries send only what was missed").
 */

/**
 * The event fields a recovery reads: a page holds no payloads (Events.recoveryPage), but for an
 * endpoint with a content filter, which reads them.
 */
export type EventRef = Pick<StoredEvent, "_id" | "workspace_id" | "type" | "created_at"> &
  Partial<Pick<StoredEvent, "payload">>;

/** Why an event is to be sent again. */
export type MissedReason = "failed" | "dropped" | "never_sent";
/** Why an event is left alone. */
export type SkippedReason = "succeeded" | "pending" | "before_subscription" | "filtered";

export interface PageVerdict {
  /** The events to queue, in the page's order, each with why. */
  missed: { event: EventRef; reason: MissedReason }[];
  skipped: Record<SkippedReason, number>;
  /**
   * Events this recovery queued already, on a run that died before recording its page: whatever
   * their delivery became since (still pending, or already sent by another worker), it is one of
   * this recovery's.
   */
  queuedBy: (recoveryId: string) => number;
}

/** A recovery window, as the job and the preview read it. */
export interface Window {
  workspaceId: string;
  since: Date;
  until: Date;
}

/** The window's next events after `cursor` that the endpoint subscribes to, in id order. */
export function readPage(
  store: Pick<RecoveryStores, "events">,
  window: Window,
  endpoint: WebhookEndpointDoc,
  cursor: string,
  pageSize: number,
): Promise<EventRef[]> {
  // Events keep their time in whole seconds (their `created`); the floor in milliseconds is judged per event.
  const since = new Date(Math.floor(window.since.getTime() / 1000) * 1000);
  const query = {
    workspaceId: window.workspaceId,
    since,
    until: window.until,
    after: cursor,
    types: subscribedTypes(endpoint.events) ?? null,
    payloads: Boolean(endpoint.filter),
  };
  return store.events.recoveryPage(query, endpoint._id, pageSize) as Promise<EventRef[]>;
}

/** Judges one page of events: what to queue, and why the others are left alone. */
export async function judgePage(
  store: Pick<RecoveryStores, "webhookDeliveries">,
  endpoint: WebhookEndpointDoc,
  page: EventRef[],
): Promise<PageVerdict> {
  const outcomes = await store.webhookDeliveries.outcomesOf(
    endpoint,
    page.map((event) => event._id),
  );
  const statuses = new Map<string, Set<string>>();
  for (const doc of outcomes) {
    const seen = statuses.get(doc.event_id) ?? new Set();
    seen.add(doc.status);
    statuses.set(doc.event_id, seen);
  }
  const skipped: Record<SkippedReason, number> = {
    succeeded: 0,
    pending: 0,
    before_subscription: 0,
    filtered: 0,
  };
  const missed: PageVerdict["missed"] = [];
  const created = endpoint.created_at.getTime();
  for (const event of page) {
    const seen = statuses.get(event._id) ?? new Set();
    // Ids carry the millisecond the event happened; the endpoint and its subscriptions began at a
    // millisecond too. Older than the endpoint: outside the window (which the page read to the second).
    const at = idTime(event._id);
    if (at < created) continue;
    if (at < subscribedSince(endpoint, event.type)) skipped.before_subscription++;
    else if (!passesFilter(endpoint, event)) skipped.filtered++;
    else if (seen.has("succeeded")) skipped.succeeded++;
    else if (seen.has("pending")) skipped.pending++;
    else
      missed.push({
        event,
        reason: seen.has("failed") ? "failed" : seen.has("dropped") ? "dropped" : "never_sent",
      });
  }
  // One queued again now (its earlier delivery failed) counts once, with those made now.
  const again = new Set(missed.map(({ event }) => event._id));
  const queuedBy = (recoveryId: string) =>
    new Set(
      outcomes.filter((d) => d.recovery_id === recoveryId && !again.has(d.event_id)).map((d) => d.event_id),
    ).size;

  return { missed, skipped, queuedBy };
}
