// Events: the workspace's events, searchable by type, by time and by id, each with where it went
// (its deliveries, read for a whole page of events at once); and one event's page, its payload and
// its deliveries, each with "Resend".

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
/** @typedef {{ type?: string, id?: string, from?: string, to?: string }} Search */

const PAGE = 25;
/** Requests of 100 deliveries each for a page of events' "Delivered to": bounded, whatever the data. */
const WENT_PAGES = 3;
/** Deliveries shown in one event's cell; its page lists them all. */
const WENT_SHOWN = 10;

/**
 * The deliveries of `eventIds` (one page of events), newest first, grouped by event: one request
 * (`listWebhookDeliveries`) per 100 deliveries, at most WENT_PAGES, never one per event.
 * `complete` is false when there were more than that.
 * @param {string[]} eventIds
 * @returns {Promise<{ byEvent: Map<string, WebhookDelivery[]>, complete: boolean }>}
 */
async function deliveriesOf(eventIds) {
  /** @type {Map<string, WebhookDelivery[]>} */
  const byEvent = new Map(eventIds.map((id) => [id, []]));
  /** @type {string | undefined} */
  let after;
  for (let read = 0; read < WENT_PAGES; read += 1) {
    /** @type {Page<WebhookDelivery>} */
    const page = await get("webhook-deliveries", { event_id: eventIds, limit: 100, starting_after: after });
    for (const delivery of page.data) byEvent.get(delivery.event_id)?.push(delivery);
    after = page.data.at(-1)?.id;
    if (!page.has_more || !after) return { byEvent, complete: true };
  }
  return { byEvent, complete: false };
}

/**
 * One event's "Delivered to": each delivery's endpoint (by URL) and status, newest first.
 * @param {HTMLTableCellElement} cell
 * @param {string} eventId
 * @param {WebhookDelivery[]} deliveries
 * @param {Map<string, string>} names
 */
function fillWent(cell, eventId, deliveries, names) {
  if (!deliveries.length) return fill(cell, "no endpoint");
  const items = deliveries
    .slice(0, WENT_SHOWN)
    .map((delivery) =>
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
    );
  const more = deliveries.length - WENT_SHOWN;
  if (more > 0) items.push(h("li", {}, h("a", { href: `#/events/${eventId}` }, `${more} more`)));
  return fill(cell, h("ul", { class: "went" }, items));
}

/**
 * The rows of a page of events. Their "Delivered to" cells fill in once one read of the page's
 * deliveries answers (see `deliveriesOf`); past its bound, a note under the table says so.
 * @param {DeskEvent[]} events
 * @param {HTMLElement} results
 */
function eventRows(events, results) {
  /** @type {Map<string, HTMLTableCellElement>} */
  const cells = new Map(events.map((event) => [event.id, h("td", {}, "…")]));
  if (events.length) {
    Promise.all([deliveriesOf([...cells.keys()]), endpointNames()]).then(
      ([{ byEvent, complete }, names]) => {
        for (const [id, cell] of cells) fillWent(cell, id, byEvent.get(id) ?? [], names);
        if (!complete && !results.querySelector(".went-partial"))
          results.append(
            h(
              "p",
              { class: "notice went-partial" },
              "Some events went to more endpoints than shown here: open an event for all its deliveries.",
            ),
          );
      },
      () => {
        for (const cell of cells.values()) fill(cell, "unknown");
      },
    );
  }
  return events.map((event) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, h("a", { href: `#/events/${event.id}`, class: "id" }, event.id)),
      h("td", {}, event.type),
      h("td", {}, when(new Date(event.created * 1000).toISOString())),
      cells.get(event.id),
    ),
  );
}

/**
 * A `datetime-local` value (the person's own time zone, to the second) as the instant it names,
 * or "" when there is none.
 * @param {string} local
 */
const instantOf = (local) => (local ? new Date(local).toISOString().replace(".000Z", "Z") : "");

/**
 * An instant (from the address) as a `datetime-local` value in the person's time zone.
 * @param {string | null} iso
 */
function localOf(iso) {
  const at = iso ? new Date(iso) : null;
  if (!at || Number.isNaN(at.getTime())) return "";
  const two = (/** @type {number} */ n) => String(n).padStart(2, "0");
  const day = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
  return `${day}T${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

/**
 * The list's time window: "From" and "To" both included, to the second. The API's bounds are
 * exclusive and events' `created` is whole seconds, so each goes one second further out.
 * @param {Search} search
 */
function createdBounds({ from, to }) {
  const shifted = (/** @type {string} */ iso, /** @type {number} */ by) =>
    new Date(new Date(iso).getTime() + by).toISOString();
  return {
    created_after: from ? shifted(from, -1000) : undefined,
    created_before: to ? shifted(to, 1000) : undefined,
  };
}

/**
 * @param {HTMLElement} results
 * @param {Search} wanted
 * @param {string} [after]
 */
async function search(results, wanted, after) {
  if (wanted.id) {
    const id = wanted.id;
    /** @type {DeskEvent | null} */
    const event = await get(`events/${id}`).catch((error) =>
      error instanceof ApiError && error.status === 404 ? null : Promise.reject(error),
    );
    return fill(
      results,
      event ? eventTable([event], results) : h("p", {}, `No event ${id} in this workspace.`),
    );
  }
  const query = { limit: PAGE, type: wanted.type, starting_after: after, ...createdBounds(wanted) };
  /** @type {Page<DeskEvent>} */
  const page = await get("events", query);
  results.querySelector(".more")?.remove();
  if (!after)
    fill(results, page.data.length ? eventTable(page.data, results) : h("p", {}, "No events match."));
  else results.querySelector("tbody")?.append(...eventRows(page.data, results));
  const last = page.data.at(-1);
  if (page.has_more && last) moreButton(results, "Show more events", () => search(results, wanted, last.id));
}

/**
 * @param {DeskEvent[]} events
 * @param {HTMLElement} results
 */
function eventTable(events, results) {
  const columns = ["Event", "Type", "Created", "Delivered to"];
  return dataTable({ caption: "Events, newest first", columns, rows: eventRows(events, results) });
}

/** @param {HTMLElement} main */
export async function eventsView(main) {
  document.title = "Events · Deskline";
  endpointNames(true);
  const id = h("input", { type: "search", name: "id", placeholder: "evt_…", spellcheck: "false" });
  // `step` 1: to the second, as events' `created` is.
  const from = h("input", { type: "datetime-local", name: "from", step: "1" });
  const to = h("input", { type: "datetime-local", name: "to", step: "1" });
  const filters = hashQuery();
  id.value = filters.get("id") ?? "";
  from.value = localOf(filters.get("from"));
  to.value = localOf(filters.get("to"));
  const results = h("div", { class: "list" }, h("p", {}, "Loading events…"));
  /** @param {string} typeValue */
  const run = (typeValue) => {
    // The address keeps instants (UTC), so a copied address means the same window anywhere.
    const wanted = {
      type: typeValue,
      from: instantOf(from.value),
      to: instantOf(to.value),
      id: id.value.trim(),
    };
    setHashQuery(wanted);
    return search(results, wanted);
  };
  // Everything the first screen shows, asked for at once: the events the address asks for beside
  // the event types the form's select lists (an unknown type in the address is the API's 400).
  const first = run(filters.get("type") ?? "").catch((error) => fill(results, problem(error)));
  const type = choice("type", "Any event type", await knownEventTypes());
  type.value = filters.get("type") ?? "";
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Search events" },
    field("Event type", type),
    field("From", from),
    field("To", to),
    field("Event ID", id),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    run(type.value).then(
      () => announce("Events searched."),
      (error) => fill(results, problem(error)),
    );
  });
  fill(main, h("h1", { tabindex: "-1" }, "Events"), form, results);
  await first;
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
