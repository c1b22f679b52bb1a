// What `events resend|deliveries` and `webhooks endpoints recover|deliveries` share: the columns of
// a delivery, and what to do next after the errors these commands can foresee.

import type { components } from "@deskline/sdk";
import { DesklineError } from "@deskline/sdk";
import { GuidedError } from "../errors.js";
import type { Column } from "../output.js";

export type Delivery = components["schemas"]["WebhookDelivery"];

/** The command that turns a disabled (or paused) endpoint back on. */
export const enableCommand = (endpointId: string) =>
  `deskline webhooks endpoints update ${endpointId} --set status=enabled`;

/**
 * A delivery's columns. Listed per event, each row is an endpoint; per endpoint, each row is an
 * event: the column the list is already about is left out. Listed for several events
 * (`webhooks deliveries --event-id …`), each row names both.
 */
export function deliveryColumns(per: "event" | "endpoint" | "events"): Column<Delivery>[] {
  return [
    { header: "ID", value: (d) => d.id },
    { header: "STATUS", value: (d) => d.status },
    ...(per === "event"
      ? []
      : [
          { header: "EVENT", value: (d: Delivery) => d.event_id },
          { header: "TYPE", value: (d: Delivery) => d.event_type },
        ]),
    ...(per === "endpoint" ? [] : [{ header: "ENDPOINT", value: (d: Delivery) => d.endpoint_id }]),
    { header: "ATTEMPTS", value: (d) => d.attempts },
    { header: "LAST CODE", value: (d) => d.last_status_code },
    { header: "LAST ATTEMPT", value: (d) => d.last_attempt_at },
    { header: "NEXT ATTEMPT", value: (d) => d.next_attempt_at },
    { header: "CREATED", value: (d) => d.created_at },
  ];
}

/**
 * What to do after an API error of a command about an event and/or an endpoint, when there is
 * something to do: enable a disabled endpoint, mind the events' retention, find the right id.
 */
export function nextStep(
  error: DesklineError,
  ids: { endpointId?: string; eventId?: string },
): string | undefined {
  if (error.code === "webhook_endpoint_disabled" && ids.endpointId) {
    return `enable it first: ${enableCommand(ids.endpointId)}`;
  }
  if (error.status === 403) return "use a key with the webhooks:manage scope (deskline config set api-key …)";
  if (error.status !== 404) return undefined;
  // A 404 names the id it is about (`param`): the endpoint's, or the event's (`id`).
  const aboutEndpoint =
    ids.endpointId !== undefined && (ids.eventId === undefined || error.param === "endpoint_id");
  return aboutEndpoint
    ? "deskline webhooks endpoints list shows the endpoints of this key's workspace"
    : "events are kept 30 days (EVENT_RETENTION_DAYS); deskline events list shows those still kept";
}

/** `call`, whose errors are reported with what to do next (see `nextStep`). */
export async function guided<T>(
  call: Promise<T>,
  ids: { endpointId?: string; eventId?: string },
): Promise<T> {
  try {
    return await call;
  } catch (error) {
    const hint = error instanceof DesklineError ? nextStep(error, ids) : undefined;
    throw hint ? new GuidedError(error as DesklineError, hint) : error;
  }
}
