// The list of webhook endpoints: each one's URL (a link to its page), status and success rate
// of the last 24 hours; and "Add endpoint".

import { api, get } from "./api.js";
import { announce, dataTable, fill, h, moreButton, problem, statusBadge, when } from "./dom.js";
import { endpointForm } from "./form.js";
import { secretNotice } from "./secret.js";

/** @typedef {import("./types.js").WebhookEndpoint} WebhookEndpoint */

const PAGE = 50;

/**
 * How its latest deliveries went, as the list answers it (`recent_deliveries`: no request per
 * row): the success rate of the newest 100 and when the last attempt was.
 * @param {WebhookEndpoint} endpoint
 */
function rateCell(endpoint) {
  const recent = endpoint.recent_deliveries;
  if (!recent || recent.success_rate === null) return h("td", {}, "—");
  return h(
    "td",
    {},
    `${Math.round(recent.success_rate * 1000) / 10} % of ${recent.succeeded + recent.failed}`,
    recent.last_attempt_at
      ? [h("br"), h("span", { class: "hint" }, "last ", when(recent.last_attempt_at))]
      : null,
  );
}

/**
 * An enabled endpoint whose last deliveries failed says so beside its status: green "enabled"
 * alone hid five failures in a row.
 * @param {WebhookEndpoint} endpoint
 */
function failing(endpoint) {
  const count = endpoint.consecutive_failures;
  if (endpoint.status !== "enabled" || count === 0) return null;
  return h("span", { class: "failing" }, ` failing: ${count} in a row`);
}

/** @param {WebhookEndpoint} endpoint */
function row(endpoint) {
  return h(
    "tr",
    {},
    h("th", { scope: "row" }, h("a", { href: `#/endpoints/${endpoint.id}` }, endpoint.url)),
    h(
      "td",
      {},
      statusBadge(endpoint.disabled_reason === "owner" ? "paused" : endpoint.status),
      failing(endpoint),
    ),
    rateCell(endpoint),
    h("td", {}, endpoint.events.join(", ")),
    h("td", {}, endpoint.description ?? ""),
  );
}

/** @param {WebhookEndpoint[]} endpoints */
function table(endpoints) {
  const columns = ["URL", "Status", "Success (latest deliveries)", "Events", "Description"];
  return dataTable({ caption: "Webhook endpoints of this workspace", columns, rows: endpoints.map(row) });
}

/**
 * Loads the endpoints into `into`: the first page anew, or the page after `after` appended.
 * @param {HTMLElement} into
 * @param {string} [after]
 */
async function listInto(into, after) {
  /** @type {import("./types.js").Page<WebhookEndpoint>} */
  const page = await get("webhook-endpoints", { limit: PAGE, starting_after: after });
  into.querySelector(".more")?.remove();
  if (!after && page.data.length === 0) {
    fill(into, h("p", {}, "No webhook endpoints yet. Add one to start receiving events."));
    return;
  }
  if (after) into.querySelector("tbody")?.append(...page.data.map(row));
  else fill(into, table(page.data));
  const last = page.data.at(-1);
  if (page.has_more && last) moreButton(into, "Show more endpoints", () => listInto(into, last.id));
}

/** @param {HTMLElement} main */
export async function endpointsView(main) {
  document.title = "Webhook endpoints · Deskline";
  const list = h("div", { class: "list" }, h("p", {}, "Loading endpoints…"));
  const notices = h("div", {});
  const formSlot = h("div", {});
  const add = h("button", { type: "button", class: "primary", "aria-expanded": "false" }, "Add endpoint");
  const closeForm = () => {
    fill(formSlot);
    add.setAttribute("aria-expanded", "false");
    add.focus();
  };
  add.addEventListener("click", async () => {
    if (formSlot.firstChild) return closeForm();
    const { form, focus } = await endpointForm({
      legend: "New endpoint",
      cancel: closeForm,
      save: async (body) => {
        /** @type {import("./types.js").WebhookEndpointWithSecret} */
        const created = await api("POST", "webhook-endpoints", { body });
        fill(formSlot);
        add.setAttribute("aria-expanded", "false");
        const notice = secretNotice(created, `Endpoint ${created.url} added.`);
        fill(
          notices,
          notice,
          h("p", {}, h("a", { href: `#/endpoints/${created.id}` }, `Open ${created.url}`)),
        );
        notice.focus();
        announce(`Endpoint ${created.url} added.`);
        await listInto(list);
      },
    });
    fill(formSlot, form);
    add.setAttribute("aria-expanded", "true");
    focus();
  });
  fill(
    main,
    h("h1", { tabindex: "-1" }, "Webhook endpoints"),
    h("div", { class: "actions" }, add),
    formSlot,
    notices,
    list,
  );
  await listInto(list).catch((error) => fill(list, problem(error)));
}
