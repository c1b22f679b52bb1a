// One endpoint's page: what it is, what can be done to it (edit, pause or resume, enable,
// rotate the secret, delete), its deliveries per hour, recovery, and its deliveries.

import { api, get, knownEventTypes } from "./api.js";
import { deliveryChart, successRate } from "./chart.js";
import { deliveriesSection, firstDeliveries } from "./deliveries.js";
import { announce, fill, h, problem, statusBadge, when } from "./dom.js";
import { endpointForm } from "./form.js";
import { recoverSection } from "./recover.js";
import { copyButton, secretNotice } from "./secret.js";
import { testEventSection } from "./test-event.js";

/** @typedef {import("./types.js").WebhookEndpoint} WebhookEndpoint */

/**
 * Each reason the API gives for a disabled endpoint, in words (every code the spec has: a new one
 * fails the typecheck until it is said here).
 * @type {Record<NonNullable<WebhookEndpoint["disabled_reason"]>, string>}
 */
const DISABLED_BECAUSE = {
  owner: "paused by its owner",
  consecutive_failures: "too many failed deliveries in a row",
};

/** An endpoint its owner paused: "Resume" rather than "Enable". */
const paused = (/** @type {WebhookEndpoint} */ endpoint) =>
  endpoint.status === "disabled" && endpoint.disabled_reason === "owner";

/**
 * @param {WebhookEndpoint} endpoint
 * @param {import("./types.js").WebhookEndpointStats} stats
 */
function facts(endpoint, stats) {
  const item = (/** @type {string} */ term, /** @type {unknown} */ value) => [
    h("dt", {}, term),
    h("dd", {}, value),
  ];
  return h(
    "dl",
    { class: "facts" },
    item("Status", statusBadge(paused(endpoint) ? "paused" : endpoint.status)),
    endpoint.disabled_reason
      ? item(
          "Disabled because",
          `${DISABLED_BECAUSE[endpoint.disabled_reason]}, ${new Date(endpoint.disabled_at ?? "").toLocaleString()}`,
        )
      : null,
    item("Events", endpoint.events.join(", ")),
    endpoint.filter
      ? item("Content filter", [
          h("code", {}, JSON.stringify(endpoint.filter)),
          ` (${stats.filtered} kept out in 24 h)`,
        ])
      : null,
    item("Signing", endpoint.signing === "ed25519" ? "Ed25519 key pair (v1a)" : "HMAC-SHA256 secret (v1)"),
    endpoint.public_key
      ? item("Public key", [
          h("code", {}, endpoint.public_key),
          " ",
          copyButton(endpoint.public_key, "Public key"),
        ])
      : null,
    item("Description", endpoint.description ?? "—"),
    item("Success rate (24 h)", h("span", { "data-rate": "" }, successRate(stats.totals))),
    item("Consecutive failures", String(endpoint.consecutive_failures)),
    item("Created", when(endpoint.created_at)),
    item("ID", h("code", {}, endpoint.id)),
  );
}

/**
 * The buttons that fit the endpoint's state; each runs one API call, then `refresh`.
 * @param {WebhookEndpoint} endpoint
 * @param {{ edit: () => Promise<void>, refresh: () => Promise<unknown>, notices: HTMLElement }} handlers
 */
function actions(endpoint, { edit, refresh, notices }) {
  /**
   * @param {string} label
   * @param {() => Promise<unknown>} run
   * @param {Record<string, unknown>} [extra]
   */
  const button = (label, run, extra = {}) => {
    const element = h("button", { type: "button", ...extra }, label);
    element.addEventListener("click", () => run().catch((error) => fill(notices, problem(error))));
    return element;
  };
  const setStatus =
    (/** @type {WebhookEndpoint["status"]} */ status, /** @type {string} */ said) => async () => {
      await api("PATCH", `webhook-endpoints/${endpoint.id}`, { body: { status } });
      announce(said);
      await refresh();
    };
  return h(
    "div",
    { class: "actions", role: "group", "aria-label": "Endpoint actions" },
    button("Edit", edit),
    endpoint.status === "enabled" ? button("Pause", setStatus("disabled", "Endpoint paused.")) : null,
    paused(endpoint) ? button("Resume", setStatus("enabled", "Endpoint resumed.")) : null,
    endpoint.status === "disabled" && !paused(endpoint)
      ? button("Enable", setStatus("enabled", "Endpoint enabled."))
      : null,
    button("Rotate secret", async () => {
      if (!window.confirm("Rotate the signing secret? The old one keeps working for 24 hours.")) return;
      const rotated = await api("POST", `webhook-endpoints/${endpoint.id}/rotate-secret`, { body: {} });
      const notice = secretNotice(rotated, "Secret rotated; the old one stays valid for 24 hours.");
      fill(notices, notice);
      notice.focus();
    }),
    button(
      "Delete",
      async () => {
        if (!window.confirm(`Delete the endpoint ${endpoint.url}? Its pending deliveries stop.`)) return;
        await api("DELETE", `webhook-endpoints/${endpoint.id}`);
        announce(`Endpoint ${endpoint.url} deleted.`);
        location.hash = "#/endpoints";
      },
      { class: "danger" },
    ),
  );
}

/**
 * @param {HTMLElement} main
 * @param {string} id
 */
export async function endpointView(main, id) {
  // Everything the first screen shows, asked for at once.
  const firstPage = firstDeliveries(id);
  firstPage.catch(() => {}); // its failure is shown where the list goes
  /** @type {[WebhookEndpoint, import("./types.js").WebhookEndpointStats, unknown]} */
  const [endpoint, stats] = await Promise.all([
    get(`webhook-endpoints/${id}`),
    get(`webhook-endpoints/${id}/stats`),
    knownEventTypes(),
  ]);
  document.title = `${endpoint.url} · Webhook endpoints · Deskline`;
  const notices = h("div", {});
  const formSlot = h("div", {});
  const chart = h("div", {}, deliveryChart(stats));
  const known = h("div", {}, facts(endpoint, stats));
  // The facts and the chart follow the deliveries: each reload of the list (a resend, a
  // recovery, "Refresh") reads them again, the failure count included.
  const restat = async () => {
    /** @type {[WebhookEndpoint, import("./types.js").WebhookEndpointStats]} */
    const [now, fresh] = await Promise.all([
      get(`webhook-endpoints/${id}`),
      get(`webhook-endpoints/${id}/stats`),
    ]);
    fill(chart, deliveryChart(fresh));
    fill(known, facts(now, fresh));
  };
  const { section: deliveries, load, reload } = await deliveriesSection(endpoint, restat, firstPage);
  const refresh = () => endpointView(main, id).then(() => main.querySelector("h1")?.focus());
  const edit = async () => {
    if (formSlot.firstChild) return void fill(formSlot);
    const { form, focus } = await endpointForm({
      initial: endpoint,
      legend: "Edit endpoint",
      cancel: () => fill(formSlot),
      save: async (body) => {
        await api("PATCH", `webhook-endpoints/${id}`, { body });
        announce("Endpoint saved.");
        await refresh();
      },
    });
    fill(formSlot, form);
    focus();
  };
  fill(
    main,
    h("p", { class: "crumbs" }, h("a", { href: "#/endpoints" }, "Webhook endpoints")),
    h("h1", { tabindex: "-1", class: "url" }, endpoint.url),
    actions(endpoint, { edit, refresh, notices }),
    notices,
    formSlot,
    known,
    h(
      "section",
      { "aria-labelledby": "chart-heading" },
      h("h2", { id: "chart-heading" }, "Deliveries per hour"),
      chart,
    ),
    recoverSection(endpoint, reload),
    await testEventSection(endpoint, reload),
    deliveries,
  );
  await load().catch((error) => deliveries.append(problem(error)));
}
