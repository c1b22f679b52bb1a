// An endpoint's deliveries: filterable by status and event type, each row with its status as
// text, its attempts, its own "Resend", and "Details" (the attempts and the event's payload).

import { api, get, knownEventTypes } from "./api.js";
import {
  announce,
  choice,
  dataTable,
  field,
  fill,
  h,
  hashQuery,
  moreButton,
  problem,
  setHashQuery,
  statusBadge,
  when,
} from "./dom.js";

/** @typedef {import("./types.js").WebhookDelivery} WebhookDelivery */
/** @typedef {import("./types.js").WebhookDeliveryStatus} WebhookDeliveryStatus */
/** @template T @typedef {import("./types.js").Page<T>} Page */

const PAGE = 25;
/** @type {WebhookDeliveryStatus[]} */
const STATUSES = ["succeeded", "failed", "pending", "dropped"];
/**
 * The attempts of one delivery, oldest first: one request (`delivery_id` on the endpoint's
 * attempts), since a delivery makes at most a handful (the first and its retries).
 * @param {WebhookDelivery} delivery
 */
async function attemptsOf(delivery) {
  /** @type {Page<import("./types.js").DeliveryAttempt>} */
  const attempts = await get(`webhook-endpoints/${delivery.endpoint_id}/attempts`, {
    limit: 100,
    delivery_id: delivery.id,
  });
  return attempts.data.sort((a, b) => a.attempt - b.attempt);
}

/**
 * What the receiver answered: its content type and the start of its body, as text (never
 * markup: `h` makes text nodes), with "…" where the body went on.
 * @param {import("./types.js").DeliveryAttempt["response"]} response
 */
function answerOf(response) {
  if (!response) return "none";
  const type = response.headers["content-type"];
  const body = `${response.body}${response.body_truncated ? "…" : ""}`;
  return h(
    "div",
    { class: "answer" },
    type ? h("span", { class: "hint" }, type) : null,
    body ? h("pre", { class: "answer-body" }, body) : h("span", {}, "(empty body)"),
  );
}

/** @param {import("./types.js").DeliveryAttempt[]} attempts */
function attemptsTable(attempts) {
  if (!attempts.length) return h("p", {}, "No attempts yet.");
  const rows = attempts.map((attempt) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, String(attempt.attempt)),
      h("td", {}, attempt.status_code === null ? "none" : String(attempt.status_code)),
      h("td", {}, `${attempt.duration_ms} ms`),
      h("td", {}, attempt.error ?? "—"),
      h("td", {}, answerOf(attempt.response)),
      h("td", {}, when(attempt.created_at)),
    ),
  );
  const columns = ["Attempt", "Status code", "Duration", "Error", "Receiver's answer", "At"];
  return dataTable({ caption: "Attempts", columns, rows, className: "attempts", showCaption: true });
}

/**
 * @param {WebhookDelivery} delivery
 * @param {HTMLElement} cell
 */
async function details(delivery, cell) {
  fill(cell, h("p", {}, "Loading…"));
  const [attempts, event] = await Promise.all([
    attemptsOf(delivery),
    get(`events/${delivery.event_id}`).catch(() => null),
  ]);
  fill(
    cell,
    attemptsTable(attempts),
    h("h3", {}, "Payload"),
    event
      ? h(
          "pre",
          { class: "payload", tabindex: "0", "aria-label": `Payload of ${delivery.event_id}` },
          JSON.stringify(event, null, 2),
        )
      : h("p", {}, "The event is past its retention."),
  );
}

/**
 * "Resend": a button that queues a new delivery of the event to this endpoint, then runs
 * `after`; what went wrong is said beside it (an alert, in plain words).
 * @param {WebhookDelivery} delivery
 * @param {() => Promise<unknown>} after
 */
export function resendButton(delivery, after) {
  const button = h("button", { type: "button" }, "Resend");
  button.addEventListener("click", async () => {
    button.parentElement?.querySelector(".problem")?.remove();
    try {
      await api("POST", `events/${delivery.event_id}/resend`, {
        body: { endpoint_id: delivery.endpoint_id },
      });
      announce(`Resent ${delivery.event_id}: a new delivery is pending.`);
      await after();
    } catch (error) {
      button.after(problem(error));
    }
  });
  return button;
}

/**
 * A failed or dropped delivery whose event a later delivery to the same endpoint brought:
 * "sent later", how (a recovery's, or a resend), linked to the event's deliveries.
 * @param {WebhookDelivery} delivery
 * @param {WebhookDelivery | undefined} later
 */
function sentLater(delivery, later) {
  if (!later || (delivery.status !== "failed" && delivery.status !== "dropped")) return null;
  const how = later.recovery_id ? "recovered" : "resent";
  return [" ", h("a", { href: `#/events/${delivery.event_id}`, class: "later" }, `sent later (${how})`)];
}

/**
 * @param {WebhookDelivery} delivery
 * @param {number} columns
 * @param {() => Promise<unknown>} reload
 * @param {WebhookDelivery} [later] a newer delivery of its event that succeeded
 */
function rows(delivery, columns, reload, later) {
  const detailCell = h("td", { colspan: columns });
  const detailRow = h("tr", { class: "detail", hidden: true }, detailCell);
  const toggle = h(
    "button",
    { type: "button", "aria-expanded": "false", "aria-controls": `detail-${delivery.id}` },
    "Details",
  );
  detailCell.id = `detail-${delivery.id}`;
  toggle.addEventListener("click", async () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    detailRow.hidden = !open;
    if (open) await details(delivery, detailCell).catch((error) => fill(detailCell, problem(error)));
  });
  const again = resendButton(delivery, reload);
  const pick = h("input", {
    type: "checkbox",
    class: "pick",
    value: delivery.id,
    "aria-label": `Select the ${delivery.status} delivery of ${delivery.event_id}`,
  });
  const main = h(
    "tr",
    { "data-delivery": delivery.id },
    h(
      "th",
      { scope: "row" },
      h("span", { class: "event-type" }, delivery.event_type),
      h("br"),
      h("a", { href: `#/events/${delivery.event_id}`, class: "id" }, delivery.event_id),
    ),
    h("td", {}, statusBadge(delivery.status), sentLater(delivery, later)),
    h("td", {}, String(delivery.attempts)),
    h("td", {}, delivery.last_status_code === null ? "—" : String(delivery.last_status_code)),
    h("td", {}, when(delivery.created_at)),
    h("td", { class: "row-actions" }, pick, " ", toggle, " ", again),
  );
  return [main, detailRow];
}

const HEAD = ["Event", "Status", "Attempts", "Last status code", "Queued", "Actions"];

/** The first page unfiltered, as `deliveriesSection` lists it: the endpoint's page asks for it at once. */
export const firstDeliveries = (/** @type {string} */ endpointId) =>
  /** @type {Promise<Page<WebhookDelivery>>} */ get(`webhook-endpoints/${endpointId}/deliveries`, {
    limit: PAGE,
  });

/**
 * "Resend selected": the deliveries ticked in `list`, resent in one call (at most 100; the server
 * refuses more, saying so), with what happened to each counted.
 * @param {HTMLElement} list
 * @param {() => Promise<unknown>} reload
 */
function bulkResend(list, reload) {
  const output = h("p", { role: "status" });
  const button = h("button", { type: "button" }, "Resend selected");
  button.addEventListener("click", async () => {
    const picked = /** @type {NodeListOf<HTMLInputElement>} */ (list.querySelectorAll("input.pick:checked"));
    const ids = [...picked].map((box) => box.value);
    if (!ids.length) return void fill(output, "Tick the deliveries to resend first.");
    try {
      /** @type {import("./types.js").WebhookDeliveryResendResult} */
      const result = await api("POST", "webhook-deliveries/resend", { body: { ids } });
      const count = (/** @type {string} */ status) =>
        result.data.filter((item) => item.status === status).length;
      const said = `${count("queued")} resent, ${count("already_pending")} already pending, ${count("error")} refused.`;
      fill(output, said);
      announce(said);
      await reload();
    } catch (error) {
      fill(output, problem(error));
    }
  });
  return h("div", { class: "actions" }, button, output);
}

/** The filters' form: Status, Event type, Filter and Refresh (both run `reload`). */
/**
 * @param {HTMLSelectElement} status
 * @param {HTMLSelectElement} eventType
 * @param {() => Promise<unknown>} reload
 * @param {HTMLElement} shown
 */
function filterForm(status, eventType, reload, shown) {
  const form = h(
    "form",
    { class: "filters", "aria-label": "Filter deliveries" },
    field("Status", status),
    field("Event type", eventType),
    h("button", { type: "submit" }, "Filter"),
    h(
      "button",
      { type: "button", onclick: () => reload().then(() => announce("Deliveries refreshed.")) },
      "Refresh",
    ),
  );
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    reload().then(
      () => announce("Deliveries filtered."),
      (error) => fill(shown, problem(error)),
    );
  });
  return form;
}

/**
 * The section: filters, the table, "Show more" and "Refresh".
 * @param {import("./types.js").WebhookEndpoint} endpoint
 * @param {() => Promise<unknown>} [onReload]
 * @param {Promise<Page<WebhookDelivery>>} [firstPage]
 */
export async function deliveriesSection(endpoint, onReload = async () => {}, firstPage = undefined) {
  const status = choice("status", "Any status", STATUSES);
  const eventType = choice("event_type", "Any event type", await knownEventTypes());
  const filters = hashQuery();
  status.value = filters.get("status") ?? "";
  eventType.value = filters.get("event_type") ?? "";
  const body = h("div", { class: "list" });
  // The page asked for the first page unfiltered, before the filters were read.
  let prefetched = status.value || eventType.value ? undefined : firstPage;
  /** @type {Map<string, WebhookDelivery>} event id → the newest succeeded delivery of it listed so far (`sentLater`) */
  const succeeded = new Map();
  /** @param {string} [after] */
  const load = async (after) => {
    const query = { limit: PAGE, status: status.value, event_type: eventType.value, starting_after: after };
    if (!after) setHashQuery({ status: status.value, event_type: eventType.value });
    /** @type {Page<WebhookDelivery>} */
    const page = await (prefetched ?? get(`webhook-endpoints/${endpoint.id}/deliveries`, query));
    prefetched = undefined;
    body.querySelector(".more")?.remove();
    if (!after && !page.data.length) return fill(body, h("p", {}, "No deliveries match."));
    if (!after) {
      const caption = "Deliveries to this endpoint, newest first";
      fill(body, dataTable({ caption, columns: HEAD, className: "deliveries" }));
    }
    if (!after) succeeded.clear();
    body.querySelector("tbody")?.append(
      ...page.data.flatMap((delivery) => {
        // Newest first: a success of the same event seen before this row came after it.
        const later = succeeded.get(delivery.event_id);
        if (delivery.status === "succeeded") succeeded.set(delivery.event_id, delivery);
        return rows(delivery, HEAD.length, reload, later);
      }),
    );
    const last = page.data.at(-1);
    if (page.has_more && last) moreButton(body, "Show more deliveries", () => load(last.id));
  };
  /** The list from its first page, and whatever follows it (the chart's counts). */
  const reload = () => Promise.all([load(), onReload()]);
  const section = h(
    "section",
    { "aria-labelledby": "deliveries-heading" },
    h("h2", { id: "deliveries-heading" }, "Deliveries"),
    filterForm(status, eventType, reload, body),
    bulkResend(body, reload),
    body,
  );
  return { section, load, reload };
}
