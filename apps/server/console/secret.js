// A signing secret, shown the one time the API returns it (create, rotate); or, for an endpoint
// that signs with Ed25519 and has no secret, its public key, which every answer shows.

import { announce, h } from "./dom.js";

/**
 * "Copy": puts `text` on the clipboard (where the browser allows it: https or localhost).
 * @param {string} text
 * @param {string} what what is copied, for the announcement ("Secret", "Public key")
 */
export function copyButton(text, what) {
  const button = h("button", { type: "button", class: "copy" }, "Copy");
  button.addEventListener("click", () =>
    navigator.clipboard.writeText(text).then(
      () => announce(`${what} copied.`),
      () => announce(`The browser did not allow copying: select the ${what.toLowerCase()} and copy it.`),
    ),
  );
  return button;
}

/**
 * @param {{ secret: string | null, public_key: string | null }} endpoint an answer of create or
 *   rotate: the secret, or (Ed25519) `null` and the public key
 * @param {string} what
 */
export function secretNotice(endpoint, what) {
  const { secret, public_key: publicKey } = endpoint;
  const [said, shown, noun] =
    secret === null
      ? [
          `${what} It signs with Ed25519: receivers verify its deliveries with this public key, which is safe to publish.`,
          publicKey ?? "",
          "Public key",
        ]
      : [`${what} Copy the signing secret now: it is not shown again.`, secret, "Secret"];
  return h(
    "div",
    { class: "notice", role: "status", tabindex: "-1" },
    h("p", {}, said),
    h("p", {}, h("code", { class: "secret" }, shown), " ", copyButton(shown, noun)),
  );
}
