// Events: the workspace's events, searchable by type and by id, each with where it went (its
// deliveries); and one event's page, its payload and its deliveries, each with "Resend".

import { ApiError, endpointNames, get, knownEventTypes } from "./api.js";
import { resendButton } from "./deliveries.js";
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

/** @typedef {import("./types.js").Event} DeskEvent */
/** @typedef {import("./types.js").WebhookDelivery} WebhookDelivery */
/** @template T @typedef {import("./types.js").Page<T>} Page */

const PAGE = 25;

/** Where one event went: each delivery's endpoint and status, read as the row appears. */
/** @param {DeskEvent} event */
function wentCell(event) {
  const cell = h("td", {}, "…");
  Promise.all([get(`events/${event.id}/deliveries`, { limit: 10 }), endpointNames()]).then(
    /** @param {[Page<WebhookDelivery>, Map<string, string>]} answers */
    ([deliveries, names]) => {
      if (!deliveries.data.length) return fill(cell, "no endpoint");
      fill(
        cell,
        h(
          "ul",
          { class: "went" },
          deliveries.data.map((delivery) =>
            h(
              "li",
              {},
              h(
                "a",
                { href: `#/endpoints/${delivery.endpoint_id}` },
                names.get(delivery.endpoint_id) ?? delivery.endpoint_id,
              ),
              " ",
              statusBadge(delivery.status),
            ),
          ),
        ),
      );
    },
    () => fill(cell, "unknown"),
  );
  return cell;
}

const eventRow = (/** @type {DeskEvent} */ event) =>
  h(
    "tr",
    {},
    h("th", { scope: "row" }, h("a", { href: `#/events/${event.id}`, class: "id" }, event.id)),
    h("td", {}, event.type),
    h("td", {}, when(new Date(event.created * 1000).toISOString())),
    wentCell(event),
  );

/**
 * @param {HTMLElement} results
 * @param {{ type?: string, id?: string }} search
 * @param {string} [after]
 */
async function search(results, { type, id }, after) {
  if (id) {
    /** @type {DeskEvent | null} */
    const event = await get(`events/${id}`).catch((error) =>
      error instanceof ApiError && error.status === 404 ? null : Promise.reject(error),
    );
    return fill(results, event ? eventTable([event]) : h("p", {}, `No event ${id} in this workspace.`));
  }
  /** @type {Page<DeskEvent>} */
  const page = await get("events", { limit: PAGE, type, starting_after: after });
  results.querySelector(".more")?.remove();
  if (!after) fill(results, page.data.length ? eventTable(page.data) : h("p", {}, "No events match."));
  else results.querySelector("tbody")?.append(...page.data.map(eventRow));
  const last = page.data.at(-1);
  if (page.has_more && last)
    moreButton(results, "Show more events", () => search(results, { type }, last.id));
}

/** @param {DeskEvent[]} events */
function eventTable(events) {
  const columns = ["Event", "Type", "Created", "Delivered to"];
  return dataTable({ caption: "Events, newest first", columns, rows: events.map(eventRow) });
}

/** @param {HTMLElement} main */
export async function eventsView(main) {
  document.title = "Events · Deskline";
  const type = choice("type", "Any event type", await knownEventTypes());
  const id = h("input", { type: "search", name: "id", placeholder: "evt_…", spellcheck: "false" });
  const filters = hashQuery();
  type.value = filters.get("type") ?? "";
  id.value = filters.get("id") ?? "";
  const results = h("div", { class: "list" }, h("p", {}, "Loading events…"));
  const run = () => {
    setHashQuery({ type: type.value, id: id.value.trim() });
    return search(results, { type: type.value, id: id.value.trim() });
  };
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Search events" },
    field("Event type", type),
    field("Event ID", id),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    run().then(
      () => announce("Events searched."),
      (error) => fill(results, problem(error)),
    );
  });
  fill(main, h("h1", { tabindex: "-1" }, "Events"), form, results);
  endpointNames(true);
  await run().catch((error) => fill(results, problem(error)));
}

/** One row of an event's deliveries: the endpoint (by URL), how it went, and "Resend". */
/**
 * @param {WebhookDelivery} delivery
 * @param {Map<string, string>} names
 * @param {() => Promise<unknown>} after
 */
function deliveryRow(delivery, names, after) {
  const again = resendButton(delivery, after);
  const endpoint = names.get(delivery.endpoint_id) ?? delivery.endpoint_id;
  return h(
    "tr",
    {},
    h("th", { scope: "row" }, h("a", { href: `#/endpoints/${delivery.endpoint_id}` }, endpoint)),
    h("td", {}, statusBadge(delivery.status)),
    h("td", {}, String(delivery.attempts)),
    h("td", {}, when(delivery.created_at)),
    h("td", {}, again),
  );
}

/**
 * @param {HTMLElement} main
 * @param {string} eventId
 */
export async function eventView(main, eventId) {
  /** @type {[DeskEvent, Page<WebhookDelivery>, Map<string, string>]} */
  const [event, deliveries, names] = await Promise.all([
    get(`events/${eventId}`),
    get(`events/${eventId}/deliveries`, { limit: 100 }),
    endpointNames(true),
  ]);
  document.title = `${event.id} · Events · Deskline`;
  const rows = deliveries.data.map((delivery) =>
    deliveryRow(delivery, names, () => eventView(main, eventId)),
  );
  const columns = ["Endpoint", "Status", "Attempts", "Queued", "Actions"];
  fill(
    main,
    h("p", { class: "crumbs" }, h("a", { href: "#/events" }, "Events")),
    h("h1", { tabindex: "-1" }, `${event.type} ${event.id}`),
    h("h2", {}, "Payload"),
    h(
      "pre",
      { class: "payload", tabindex: "0", "aria-label": "Event payload" },
      JSON.stringify(event, null, 2),
    ),
    h("h2", {}, "Deliveries"),
    rows.length
      ? dataTable({ caption: "Deliveries of this event", columns, rows })
      : h("p", {}, "No endpoint received this event."),
  );
}
