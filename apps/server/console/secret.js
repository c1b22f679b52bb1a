// A signing secret, shown the one time the API returns it (create, rotate).

import { announce, h } from "./dom.js";

/**
 * "Copy": puts `text` on the clipboard (where the browser allows it: https or localhost).
 * @param {string} text
 */
function copyButton(text) {
  const button = h("button", { type: "button", class: "copy" }, "Copy");
  button.addEventListener("click", () =>
    navigator.clipboard.writeText(text).then(
      () => announce("Secret copied."),
      () => announce("The browser did not allow copying: select the secret and copy it."),
    ),
  );
  return button;
}

/**
 * @param {{ secret: string }} endpoint an answer that carries the secret (create, rotate)
 * @param {string} what
 */
export function secretNotice(endpoint, what) {
  const notice = h(
    "div",
    { class: "notice", role: "status", tabindex: "-1" },
    h("p", {}, `${what} Copy the signing secret now: it is not shown again.`),
    h("p", {}, h("code", { class: "secret" }, endpoint.secret), " ", copyButton(endpoint.secret)),
  );
  return notice;
}
