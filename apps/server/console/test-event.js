// "Send a test event": the catalog's example of a chosen type, sent to this endpoint alone,
// signed and marked `test: true`, through the normal delivery path
// (sendWebhookEndpointTestEvent); the delivery it queued shows in the list below.

import { api, knownEventTypes } from "./api.js";
import { announce, field, fill, h, problem } from "./dom.js";

/**
 * @param {import("./types.js").WebhookEndpoint} endpoint
 * @param {() => Promise<unknown>} after what to reload once it is queued (the deliveries)
 */
export async function testEventSection(endpoint, after) {
  const types = await knownEventTypes();
  const type = h(
    "select",
    { name: "event_type" },
    types.map((value) => h("option", { value }, value)),
  );
  const output = h("p", { role: "status" });
  const disabled = endpoint.status === "disabled";
  const form = h(
    "form",
    { class: "filters" },
    field("Test event type", type),
    h("button", { type: "submit", disabled }, "Send test event"),
    disabled
      ? h("p", { class: "hint" }, "A disabled endpoint receives nothing: resume or enable it first.")
      : null,
  );
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    try {
      /** @type {import("./types.js").WebhookDelivery} */
      const delivery = await api("POST", `webhook-endpoints/${endpoint.id}/test`, {
        body: { event_type: type.value },
      });
      fill(output, `Test ${delivery.event_type} event ${delivery.event_id} queued.`);
      announce(`Test event ${delivery.event_id} queued.`);
      await after();
    } catch (error) {
      fill(output, problem(error));
    }
  });
  return h(
    "section",
    { "aria-labelledby": "test-event-heading" },
    h("h2", { id: "test-event-heading" }, "Send a test event"),
    form,
    output,
  );
}
