import type { AppError, DomainError } from "../../platform/errors.js";
import { errorObject, notFound } from "../../platform/errors.js";
import { httpError } from "../../platform/http/error-response.js";
import type { Handler } from "../../platform/http/operation.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../../platform/http/route-kit.js";
import type { Schema } from "../../spec/types.js";
import { toWebhookDelivery, type WebhookDeliveryDoc } from "../deliveries/store.js";
import { endpointDisabled, type WebhookEndpointDoc } from "../endpoints/store.js";
import type { RecoveryStores } from "./store.js";

type Kit = RouteKit<RecoveryStores>;
type ItemResult = Schema<"WebhookDeliveryResendItemResult">;

/**
 * `resendWebhookDeliveries`: up to 100 chosen deliveries queued again, each to its own endpoint,
 * with one result per id as the contacts batch answers (contacts/routes.ts). A fixed number of
 * round trips whatever the ids: one read of the deliveries, one of their endpoints' (in parallel),
 * one of which events are still kept, one insert of the new deliveries. The schema caps `ids` at
 * 100 and refuses a repeated one before this runs.
 */
export function bulkResendRoutes(kit: Kit): void {
  mountHandlers(kit, { resendWebhookDeliveries });
}

function resendWebhookDeliveries({ store }: Kit): Handler<"resendWebhookDeliveries"> {
  return async ({ ctx, body }) => {
    const workspaceId = workspaceOf(ctx);
    const found = new Map(
      (await store.webhookDeliveries.findIn(workspaceId, body.ids)).map((d) => [d._id, d]),
    );
    const deliveries = [...found.values()];
    const [endpoints, kept] = await Promise.all([
      endpointsOf(store, deliveries),
      store.events.keptOf([...new Set(deliveries.map((d) => d.event_id))]),
    ]);
    const refusal = (id: string): DomainError | undefined => {
      const delivery = found.get(id);
      if (!delivery || !kept.has(delivery.event_id)) return notFound("webhook delivery", id, "ids");
      const endpoint = endpoints.get(delivery.endpoint_id);
      if (!endpoint) return notFound("webhook delivery", id, "ids"); // its endpoint was deleted
      return endpoint.status === "enabled" ? undefined : endpointDisabled(endpoint, "ids");
    };
    const refused = new Map<string, DomainError>();
    for (const id of body.ids) {
      const error = refusal(id);
      if (error) refused.set(id, error);
    }
    const toQueue = body.ids
      .filter((id) => !refused.has(id))
      .map((id) => found.get(id) as WebhookDeliveryDoc);
    const queued = await store.deliveryQueue.queue(
      toQueue.map((d) => ({
        event: {
          _id: d.event_id,
          workspace_id: d.workspace_id,
          type: d.event_type,
          created_at: d.created_at,
        },
        endpointId: d.endpoint_id,
      })),
      { origin: "resend" },
    );
    const made = new Map(queued.map((d) => [`${d.endpoint_id} ${d.event_id}`, d]));
    const data = body.ids.map((id, index): ItemResult => {
      const error = refused.get(id);
      if (error) return { index, id, status: "error", error: errorObject(httpError(error) as AppError) };
      const asked = found.get(id) as WebhookDeliveryDoc;
      const key = `${asked.endpoint_id} ${asked.event_id}`;
      const delivery = made.get(key);
      // Two ids of one event and endpoint queue it once: the first gets the delivery.
      made.delete(key);
      return delivery
        ? { index, id, status: "queued", delivery: toWebhookDelivery(delivery) }
        : { index, id, status: "already_pending", delivery: null };
    });
    return { status: 200, body: { object: "webhook_delivery_resend", data } };
  };
}

/** The endpoints of these deliveries, by id: one read each, in parallel (at most 100). */
async function endpointsOf(
  store: RecoveryStores,
  deliveries: WebhookDeliveryDoc[],
): Promise<Map<string, WebhookEndpointDoc>> {
  const ids = [...new Set(deliveries.map((d) => d.endpoint_id))];
  const docs = await Promise.all(ids.map((id) => store.webhookEndpoints.find(id)));
  return new Map(docs.flatMap((doc) => (doc ? [[doc._id, doc] as const] : [])));
}
