// The endpoint form, for adding and for editing: URL, Events, Description, Signing (when adding),
// and Save.

import { ApiError, knownEventTypes } from "./api.js";
import { field, h, problem } from "./dom.js";

const ALL = "*";

/**
 * The events select: "All events" or any of the server's types (several with Ctrl/Shift or Space).
 * @param {readonly string[]} selected
 */
async function eventsSelect(selected) {
  const types = await knownEventTypes();
  const chosen = new Set(selected);
  const option = (/** @type {string} */ value, /** @type {string} */ text) =>
    h("option", { value, selected: chosen.has(value) }, text);
  return h(
    "select",
    { name: "events", multiple: true, size: Math.min(types.length + 1, 8) },
    option(ALL, "All events (*)"),
    types.map((type) => option(type, type)),
  );
}

/**
 * How a new endpoint signs: chosen once, at creation (a rotation can switch it; the edit form
 * does not offer it, as a PATCH cannot).
 */
function signingSelect() {
  return h(
    "select",
    { name: "signing" },
    h("option", { value: "hmac_sha256", selected: true }, "HMAC-SHA256 with a secret (v1)"),
    h("option", { value: "ed25519" }, "Ed25519 with a key pair: receivers need only its public key (v1a)"),
  );
}

/**
 * @typedef {import("./types.js").WebhookEndpointUpdate & { signing?: import("./types.js").WebhookEndpointSigning }} EndpointFields
 */

/**
 * A form that calls `save(fields)` (an API call) and shows its error next to the field the
 * server names (`param`). `initial` fills it for an edit.
 * @param {{
 *   initial?: import("./types.js").WebhookEndpoint,
 *   legend: string,
 *   save: (body: EndpointFields) => Promise<void>,
 *   cancel?: () => void,
 * }} options
 */
export async function endpointForm({ initial, legend, save, cancel }) {
  const url = h("input", {
    name: "url",
    type: "url",
    required: true,
    autocomplete: "url",
    value: initial?.url ?? "https://",
  });
  const events = await eventsSelect(initial?.events ?? [ALL]);
  const description = h("input", {
    name: "description",
    type: "text",
    maxlength: 500,
    value: initial?.description ?? "",
  });
  const signing = initial ? null : signingSelect();
  const errors = h("div", { class: "form-errors" });
  const form = h(
    "form",
    { class: "panel", novalidate: true },
    h(
      "fieldset",
      {},
      h("legend", {}, legend),
      field(
        "URL",
        url,
        "An https:// address that receives the events as signed POST requests (on a development server, http://127.0.0.1:… too).",
      ),
      field("Events", events, "The event types to send; “All events” includes types added later."),
      field("Description", description),
      signing
        ? field(
            "Signing",
            signing,
            "How deliveries are signed. With Ed25519 the endpoint shows a public key instead of a secret.",
          )
        : null,
    ),
    errors,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save"),
      cancel ? h("button", { type: "button", onclick: cancel }, "Cancel") : null,
    ),
  );
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    // The options are "*" and the server's event types (eventsSelect): the subscriptions the API takes.
    const picked = /** @type {import("./types.js").EventSubscription[]} */ (
      [...events.selectedOptions].map((option) => option.value)
    );
    /** @type {EndpointFields} */
    const body = {
      url: url.value.trim(),
      events: picked.includes(ALL) || picked.length === 0 ? [ALL] : picked,
    };
    const text = description.value.trim();
    if (text) body.description = text;
    else if (initial?.description) body.description = null;
    if (signing) body.signing = /** @type {import("./types.js").WebhookEndpointSigning} */ (signing.value);
    errors.replaceChildren();
    for (const control of [url, events, description]) control.removeAttribute("aria-invalid");
    try {
      await save(body);
    } catch (error) {
      const param = error instanceof ApiError ? error.param : undefined;
      const control =
        param === "url" || param === "events" || param === "description"
          ? { url, events, description }[param]
          : undefined;
      control?.setAttribute("aria-invalid", "true");
      errors.append(problem(error));
      (control ?? url).focus();
    }
  });
  return { form, focus: () => url.focus() };
}
