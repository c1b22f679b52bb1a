// Deliveries per hour over 24 hours (getWebhookEndpointStats), as stacked bars: succeeded below,
// failed above. The picture is one image with a summary for screen readers; the same numbers
// are a table under it, for anyone who wants them exactly.

import { dataTable, h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 720;
const HEIGHT = 160;
const AXIS = 24;

/** @typedef {import("./types.js").WebhookEndpointStats} WebhookEndpointStats */
/** @typedef {WebhookEndpointStats["hourly"][number]} Hour */

/**
 * @param {string} tag
 * @param {Record<string, unknown>} [attributes]
 * @param {...(Node | string)} children
 */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

const hourLabel = (/** @type {string} */ iso) =>
  new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/**
 * @param {Hour[]} hourly
 * @param {number} peak
 */
function bars(hourly, peak) {
  const slot = WIDTH / hourly.length;
  const scale = (HEIGHT - AXIS) / peak;
  return hourly.flatMap((hour, index) => {
    const x = index * slot + 2;
    const ok = hour.succeeded * scale;
    const failed = hour.failed * scale;
    const title = `${hourLabel(hour.start)}: ${hour.succeeded} succeeded, ${hour.failed} failed`;
    return [
      svg("rect", { class: "bar-succeeded", x, y: HEIGHT - AXIS - ok, width: slot - 4, height: ok }),
      svg("rect", {
        class: "bar-failed",
        x,
        y: HEIGHT - AXIS - ok - failed,
        width: slot - 4,
        height: failed,
      }),
      svg("title", {}, title),
    ];
  });
}

/** @param {Hour[]} hourly */
function axisLabels(hourly) {
  const slot = WIDTH / hourly.length;
  return hourly
    .map((hour, index) => ({ hour, index }))
    .filter(({ index }) => index % 4 === 0)
    .map(({ hour, index }) =>
      svg("text", { x: index * slot + 2, y: HEIGHT - 6, class: "axis" }, hourLabel(hour.start)),
    );
}

/**
 * The chart of one endpoint's stats, with its table.
 * @param {WebhookEndpointStats} stats
 */
export function deliveryChart(stats) {
  const { totals, hourly } = stats;
  const peak = Math.max(1, ...hourly.map((hour) => hour.succeeded + hour.failed));
  const summary = `Deliveries per hour over the last 24 hours: ${totals.succeeded} succeeded, ${totals.failed} failed, ${totals.pending} pending, ${totals.dropped} dropped.`;
  const picture = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": summary, class: "chart" },
    ...bars(hourly, peak),
    ...axisLabels(hourly),
    svg("text", { x: WIDTH - 4, y: 12, class: "axis", "text-anchor": "end" }, `${peak} per hour`),
    svg("line", { x1: 0, x2: WIDTH, y1: 0, y2: 0, class: "scale" }),
  );
  const legend = h(
    "p",
    { class: "legend" },
    h("span", { class: "key key-succeeded" }, `${totals.succeeded} succeeded`),
    " ",
    h("span", { class: "key key-failed" }, `${totals.failed} failed`),
    ` · ${totals.pending} pending · ${totals.dropped} dropped`,
  );
  const rows = hourly.map((hour) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, hourLabel(hour.start)),
      h("td", {}, String(hour.succeeded)),
      h("td", {}, String(hour.failed)),
    ),
  );
  const table = h(
    "details",
    {},
    h("summary", {}, "Deliveries per hour as a table"),
    dataTable({ caption: "Deliveries per hour", columns: ["Hour", "Succeeded", "Failed"], rows }),
  );
  return h("div", { class: "chart-block" }, picture, legend, table);
}

/**
 * The success rate of a stats window as text: "97.5 %", or "—" with nothing settled.
 * @param {WebhookEndpointStats["totals"]} totals
 */
export function successRate(totals) {
  const settled = totals.succeeded + totals.failed;
  if (!settled) return "—";
  return `${Math.round((totals.succeeded / settled) * 1000) / 10} %`;
}
