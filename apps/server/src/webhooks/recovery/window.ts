import type { Events } from "../../events/events.js";
import { AppError } from "../../platform/errors.js";
import { parseInstant } from "../../platform/http/paging.js";
import { idTime } from "../../platform/ids.js";
import type { WebhookDeliveries } from "../deliveries/store.js";
import type { WebhookEndpointDoc } from "../endpoints/document.js";
import type { RecoveryWindow } from "./resend.js";

/**
 * The window of a recovery (docs/decisions.md, "Recoveries send only what was missed"): read from
 * the request before the endpoint is looked up (a malformed body is 400 whatever the id), then
 * applied to the endpoint: without `since`, its first failure since it was last healthy; never
 * before its creation; at most the event retention back.
 */

/** What the request asked: `since` when sent, `until` at most now. */
export interface AskedWindow {
  since?: Date;
  until: Date;
  untilSent: boolean;
}

/** Parses the body's instants; `until` defaults to now and is at most now. */
export function askedWindow(
  body: { since?: number | string; until?: number | string },
  now: number,
): AskedWindow {
  const until = body.until === undefined ? new Date(now) : parseInstant(body.until, "until");
  if (until.getTime() > now) until.setTime(now);
  const since = body.since === undefined ? undefined : parseInstant(body.since, "since");
  return { ...(since ? { since } : {}), until, untilSent: body.until !== undefined };
}

/** The window as a recovery of `endpoint` applies it; throws the request's 400s. */
export async function appliedWindow(
  asked: AskedWindow,
  endpoint: WebhookEndpointDoc,
  stores: { events: Pick<Events, "keptSince" | "retentionMs">; webhookDeliveries: WebhookDeliveries },
  now: number,
): Promise<RecoveryWindow> {
  const kept = stores.events.keptSince(new Date(now));
  let since = asked.since;
  if (since === undefined) {
    const failedEvent = await stores.webhookDeliveries.firstFailureSinceHealthy(endpoint);
    if (failedEvent === null) {
      throw new AppError(
        400,
        "parameter_missing",
        "The endpoint has no failed or dropped delivery since its last successful one, so there is no first failure to start from; send `since`.",
        { param: "since" },
      );
    }
    // Its event may be past retention already: the window starts at what is kept.
    since = new Date(Math.max(idTime(failedEvent), kept.getTime()));
  }
  if (asked.until.getTime() < since.getTime()) {
    throw new AppError(
      400,
      "parameter_invalid",
      "The window ends before it starts: `until` must not be before `since` (and `since` not in the future).",
      { param: asked.untilSent ? "until" : "since" },
    );
  }
  if (since < kept) {
    const days = Math.round(stores.events.retentionMs / 86_400_000);
    throw new AppError(
      400,
      "parameter_invalid",
      `\`since\` is older than the event retention (${days} days): events before it are gone.`,
      { param: "since" },
    );
  }
  // Nothing older than the endpoint is a delivery it missed; an empty window stays a window.
  const floor = Math.min(Math.max(since.getTime(), endpoint.created_at.getTime()), asked.until.getTime());
  return { since: new Date(floor), until: asked.until };
}
