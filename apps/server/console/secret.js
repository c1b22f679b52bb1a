// A signing secret, shown the one time the API returns it (create, rotate).

import { h } from "./dom.js";

/**
 * @param {{ secret: string }} endpoint an answer that carries the secret (create, rotate)
 * @param {string} what
 */
export function secretNotice(endpoint, what) {
  const notice = h(
    "div",
    { class: "notice", role: "status", tabindex: "-1" },
    h("p", {}, `${what} Copy the signing secret now: it is not shown again.`),
    h("p", {}, h("code", { class: "secret" }, endpoint.secret)),
  );
  return notice;
}
