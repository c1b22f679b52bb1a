import { eventExamples } from "../../events/catalog.js";
import type { Events } from "../../events/events.js";
import { newTestEvent } from "../../events/model.js";
import type { Handler } from "../../platform/http/operation.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import { endpointDisabled } from "../endpoints/store.js";
import type { DeliveryQueue } from "./queue.js";
import { toWebhookDelivery } from "./store.js";

type Kit = RouteKit<{
  webhookEndpoints: {
    get(workspaceId: string, id: string): Promise<{ _id: string; workspace_id: string; status: string }>;
  };
  events: Pick<Events, "insertOnce">;
  deliveryQueue: Pick<DeliveryQueue, "queue">;
}>;

/**
 * `sendWebhookEndpointTestEvent`: the catalog's example of a type, as a new event for one
 * endpoint (events/model.ts `newTestEvent`), stored like any event and queued like a resend, so
 * it goes out through the normal delivery path (the lane, signing, retries, the attempts log).
 * The type is the spec's enum, checked by the request's validation before this runs.
 */
export function testEventRoutes(kit: Kit): void {
  mountHandlers(kit, { sendWebhookEndpointTestEvent });
}

function sendWebhookEndpointTestEvent({ store, openapi }: Kit): Handler<"sendWebhookEndpointTestEvent"> {
  // Read once at start-up, like the catalog (events/catalog.ts).
  const examples = eventExamples(openapi.dereferenced);
  return async ({ ctx, id, body }) => {
    const endpoint = await store.webhookEndpoints.get(workspaceOf(ctx), id);
    if (endpoint.status !== "enabled") throw endpointDisabled(endpoint, "id");
    const example = examples.get(body.event_type);
    if (!example) throw new Error(`no example of ${body.event_type}`); // eventExamples has every type
    const event = newTestEvent(endpoint.workspace_id, body.event_type, example, endpoint._id);
    await store.events.insertOnce([event]);
    // Queued as a resend is: one delivery, to this endpoint only, due now.
    const [delivery] = await store.deliveryQueue.queue([{ event, endpointId: endpoint._id }], {
      origin: "resend",
      events: [event],
    });
    if (!delivery) throw new Error(`the test event ${event._id} was not queued`); // a new event: never
    return { status: 202, body: toWebhookDelivery(delivery) };
  };
}
