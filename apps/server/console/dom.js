// The console's DOM helpers: elements built by code (no HTML strings, so no markup injection
// from an endpoint's description or an event's payload), and one live region for announcements.

/**
 * An element with attributes, listeners (`onclick`…) and children (nodes or text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [props]
 * @param {...unknown} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    } else if (name === "class") element.className = String(value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

/**
 * Appends children, skipping null, undefined and false; arrays are flattened.
 * @template {Element} E
 * @param {E} parent
 * @param {unknown[]} children
 * @returns {E}
 */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/**
 * Replaces an element's children.
 * @template {Element} E
 * @param {E} parent
 * @param {...unknown} children
 * @returns {E}
 */
export function fill(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/**
 * Says something to screen reader users without moving their focus.
 * @param {string} text
 */
export function announce(text) {
  const region = document.getElementById("status");
  if (!region) return;
  region.textContent = "";
  // A change the assistive technology notices even when the same text is said twice.
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}

/**
 * A time as people read it, with the exact instant in a <time> element.
 * @param {string | null | undefined} iso
 */
export function when(iso) {
  if (!iso) return "—";
  return h("time", { datetime: iso }, new Date(iso).toLocaleString([], { timeZoneName: "short" }));
}

/**
 * The API's errors a person meets in the console, in words that say what to do: the server's
 * messages are written for API clients (they name operations and fields). Codes not here keep
 * the server's message (a field's error names the field, and the form marks it).
 * @type {Partial<Record<import("./types.js").ErrorCode, string>>}
 */
const PLAIN = {
  csrf_token_invalid: "This page is out of date: reload it, then try again.",
  rate_limited: "Too many requests at once: wait a few seconds, then try again.",
  database_unavailable: "The server cannot reach its database just now: try again in a minute.",
  internal_error: "The server failed on this request. Try again; if it fails again, tell your operator.",
  concurrent_update: "It was changed at the same time by someone else: reload, then try again.",
  webhook_endpoint_disabled: "The endpoint is disabled and receives nothing: resume or enable it first.",
};

/**
 * A visible message of what went wrong, announced too.
 * @param {unknown} error
 */
export function problem(error) {
  const code = /** @type {{ code?: import("./types.js").ErrorCode }} */ (error)?.code;
  const plain = code ? PLAIN[code] : undefined;
  const text = plain ?? (error instanceof Error ? error.message : String(error));
  return h("p", { class: "problem", role: "alert" }, text);
}

/**
 * A delivery or endpoint status as text, with a class the stylesheet colours (never colour
 * alone); `paused`: an endpoint its owner disabled (`disabled_reason` `owner`).
 * @param {import("./types.js").WebhookDeliveryStatus | import("./types.js").WebhookEndpoint["status"] | "paused"} status
 */
export function statusBadge(status) {
  return h("span", { class: `badge badge-${status}` }, status);
}

let fieldCount = 0;
/**
 * A form field: a label bound to its control.
 * @param {string} label
 * @param {HTMLElement} control
 * @param {string} [hint]
 */
export function field(label, control, hint) {
  fieldCount += 1;
  const id = control.id || `field-${fieldCount}`;
  control.id = id;
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
    control,
  );
}

/**
 * A select of `values` whose first option, "", means any of them.
 * @param {string} name
 * @param {string} anyLabel
 * @param {readonly string[]} values
 */
export function choice(name, anyLabel, values) {
  return h(
    "select",
    { name },
    h("option", { value: "" }, anyLabel),
    values.map((value) => h("option", { value }, value)),
  );
}

/**
 * A table with a caption (hidden unless `showCaption`), column headers and `rows`.
 * @param {{ caption: string, columns: string[], rows?: unknown[], className?: string, showCaption?: boolean }} table
 */
export function dataTable({ caption, columns, rows = [], className, showCaption = false }) {
  return h(
    "table",
    { class: className },
    caption ? h("caption", { class: showCaption ? undefined : "visually-hidden" }, caption) : null,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.map((name) => h("th", { scope: "col" }, name)),
      ),
    ),
    h("tbody", {}, rows),
  );
}

/**
 * "Show more …": a button at the end of `into` that loads the next page, once.
 * @param {HTMLElement} into
 * @param {string} label
 * @param {() => Promise<unknown>} next
 */
export function moreButton(into, label, next) {
  into.querySelector(".more")?.remove();
  const more = h("button", { type: "button", class: "more" }, label);
  more.addEventListener("click", () => next().catch((error) => into.append(problem(error))));
  into.append(more);
}

/** The filters in the location's hash, after its `?` (`#/events?type=contact.created`). */
export function hashQuery() {
  const at = location.hash.indexOf("?");
  return new URLSearchParams(at < 0 ? "" : location.hash.slice(at + 1));
}

/**
 * Writes `filters` (the empty ones left out) into the hash after its `?`, without a new history
 * entry or a hashchange: the view already shows them; a copy of the address shows them again.
 * @param {Record<string, string>} filters
 */
export function setHashQuery(filters) {
  const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== ""));
  const path = location.hash.split("?")[0];
  history.replaceState(null, "", query.size ? `${path}?${query}` : path);
}
