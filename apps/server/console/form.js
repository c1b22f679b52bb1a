// The endpoint form, for adding and for editing: URL, Events, Description, and Save.

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
 * A form that calls `save(fields)` (an API call) and shows its error next to the field the
 * server names (`param`). `initial` fills it for an edit.
 * @param {{
 *   initial?: import("./types.js").WebhookEndpoint,
 *   legend: string,
 *   save: (body: import("./types.js").WebhookEndpointUpdate) => Promise<void>,
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
    /** @type {import("./types.js").WebhookEndpointUpdate} */
    const body = {
      url: url.value.trim(),
      events: picked.includes(ALL) || picked.length === 0 ? [ALL] : picked,
    };
    const text = description.value.trim();
    if (text) body.description = text;
    else if (initial?.description) body.description = null;
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
