import type { WebhookEndpointDoc } from "./document.js";

/**
 * Since when an endpoint has received each event type: what a recovery may send it, since an
 * event older than the endpoint's subscription to its type is not one it missed
 * (docs/decisions.md, "Recoveries send only what was missed"). The endpoint keeps when each entry of
 * its `events` began (`subscribed_at`); endpoints made before it was kept count from their creation.
 */

type Subscribed = Pick<WebhookEndpointDoc, "events" | "created_at" | "subscribed_at">;

/** When `entry` (a type, or `*`) of the endpoint's `events` began. */
const entrySince = (endpoint: Subscribed, entry: string): number =>
  (endpoint.subscribed_at?.[entry] ?? endpoint.created_at).getTime();

/**
 * Since when (ms) the endpoint has received events of `type`: the earliest of its entries that
 * cover the type (the type itself, `*`), or Infinity when none does.
 */
export function subscribedSince(endpoint: Subscribed, type: string): number {
  let since = Number.POSITIVE_INFINITY;
  for (const entry of endpoint.events) {
    if (entry === type || entry === "*") since = Math.min(since, entrySince(endpoint, entry));
  }
  return since;
}

/**
 * `subscribed_at` once `events` becomes `next` at `now`: an entry kept keeps its time, a type
 * that `*` covered until now keeps the time of `*`, and a new entry begins now.
 */
export function nextSubscriptions(
  current: Subscribed,
  next: readonly string[],
  now: Date,
): Record<string, Date> {
  const times: Record<string, Date> = {};
  for (const entry of next) {
    if ((current.events as readonly string[]).includes(entry))
      times[entry] = new Date(entrySince(current, entry));
    else if (current.events.includes("*")) times[entry] = new Date(entrySince(current, "*"));
    else times[entry] = now;
  }
  return times;
}
