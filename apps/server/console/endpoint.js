// One endpoint's page: what it is, what can be done to it (edit, pause or resume, enable,
// rotate the secret, delete), its deliveries per hour, recovery, and its deliveries.

import { api, get, knownEventTypes } from "./api.js";
import { deliveryChart, successRate } from "./chart.js";
import { deliveriesSection, firstDeliveries } from "./deliveries.js";
import { announce, fill, h, problem, statusBadge, when } from "./dom.js";
import { endpointForm } from "./form.js";
import { recoverSection } from "./recover.js";
import { secretNotice } from "./secret.js";

/** Matches the server's reason for an endpoint its owner paused (webhooks/endpoints/store.ts). */
const OWNER_DISABLED = "disabled by the owner";

function facts(endpoint, stats) {
  const item = (term, value) => [h("dt", {}, term), h("dd", {}, value)];
  return h(
    "dl",
    { class: "facts" },
    item("Status", statusBadge(endpoint.status)),
    endpoint.disabled_reason ? item("Disabled because", endpoint.disabled_reason) : null,
    item("Events", endpoint.events.join(", ")),
    item("Description", endpoint.description ?? "—"),
    item("Success rate (24 h)", h("span", { "data-rate": "" }, successRate(stats.totals))),
    item("Consecutive failures", String(endpoint.consecutive_failures)),
    item("Created", when(endpoint.created_at)),
    item("ID", h("code", {}, endpoint.id)),
  );
}

/** The buttons that fit the endpoint's state; each runs one API call, then `refresh`. */
function actions(endpoint, { edit, refresh, notices }) {
  const button = (label, run, extra = {}) => {
    const element = h("button", { type: "button", ...extra }, label);
    element.addEventListener("click", () => run().catch((error) => fill(notices, problem(error))));
    return element;
  };
  const setStatus = (status, said) => async () => {
    await api("PATCH", `webhook-endpoints/${endpoint.id}`, { body: { status } });
    announce(said);
    await refresh();
  };
  const paused = endpoint.status === "disabled" && endpoint.disabled_reason === OWNER_DISABLED;
  return h(
    "div",
    { class: "actions", role: "group", "aria-label": "Endpoint actions" },
    button("Edit", edit),
    endpoint.status === "enabled" ? button("Pause", setStatus("disabled", "Endpoint paused.")) : null,
    paused ? button("Resume", setStatus("enabled", "Endpoint resumed.")) : null,
    endpoint.status === "disabled" && !paused
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

export async function endpointView(main, id) {
  // Everything the first screen shows, asked for at once.
  const firstPage = firstDeliveries(id);
  firstPage.catch(() => {}); // its failure is shown where the list goes
  const [endpoint, stats] = await Promise.all([
    get(`webhook-endpoints/${id}`),
    get(`webhook-endpoints/${id}/stats`),
    knownEventTypes(),
  ]);
  document.title = `${endpoint.url} · Webhook endpoints · Deskline`;
  const notices = h("div", {});
  const formSlot = h("div", {});
  const chart = h("div", {}, deliveryChart(stats));
  // The counts and the chart follow the deliveries: each reload of the list reads them again.
  const restat = async () => {
    const fresh = await get(`webhook-endpoints/${id}/stats`);
    fill(chart, deliveryChart(fresh));
    const rate = main.querySelector("[data-rate]");
    if (rate) fill(rate, successRate(fresh.totals));
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
    facts(endpoint, stats),
    h(
      "section",
      { "aria-labelledby": "chart-heading" },
      h("h2", { id: "chart-heading" }, "Deliveries per hour"),
      chart,
    ),
    recoverSection(endpoint, reload),
    deliveries,
  );
  await load().catch((error) => deliveries.append(problem(error)));
}
