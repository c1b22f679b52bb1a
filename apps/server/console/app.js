// The webhook console's entry: opens the session (from a link's one-time token, or the cookie
// this browser already holds), then shows the view the location's hash names. Hash routes keep
// the console one page the server serves as is.

import { currentSession, endSession, openSession } from "./api.js";
import { fill, h, problem } from "./dom.js";
import { endpointView } from "./endpoint.js";
import { endpointsView } from "./endpoints.js";
import { eventsView, eventView } from "./events.js";

/** @type {[RegExp, (main: HTMLElement, id: string) => Promise<void>][]} */
const ROUTES = [
  // A view's filters follow `?` (dom.js, `hashQuery`): a link or a reload shows the same list.
  [/^#\/endpoints\/(we_[0-9A-Za-z]+)(?:\?.*)?$/, endpointView],
  [/^#\/events\/(evt_[0-9A-Za-z]+)$/, eventView],
  [/^#\/events(?:\?.*)?$/, eventsView],
  [/^#\/endpoints$/, endpointsView],
];

let shown = 0;

/** The page's element with `id` (the page, src/console/page.ts, always has it). */
const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @param {boolean} moveFocus */
async function show(moveFocus) {
  const main = byId("main");
  const ticket = ++shown;
  const match = ROUTES.map(([pattern, view]) => ({ found: pattern.exec(location.hash), view })).find(
    ({ found }) => found,
  );
  if (!match?.found) {
    location.replace("#/endpoints");
    return;
  }
  const { found, view } = match;
  // Each view fills a fresh element; a slower, older view never overwrites a newer one.
  const target = h("div", { class: "view" });
  try {
    await view(target, found[1] ?? "");
  } catch (error) {
    fill(target, h("h1", { tabindex: "-1" }, "Something went wrong"), problem(error));
  }
  if (ticket !== shown) return;
  fill(main, target);
  for (const link of document.querySelectorAll("nav a")) {
    const current = location.hash.startsWith(link.getAttribute("href") ?? "");
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (moveFocus) main.querySelector("h1")?.focus();
}

/** @param {unknown} error */
function signedOut(error) {
  document.title = "Session ended · Deskline";
  fill(
    byId("main"),
    h("h1", {}, "No console session"),
    problem(error),
    h(
      "p",
      {},
      "Console links work once and for a few minutes. Get a new one with `deskline console` " +
        "(an API key with webhooks:manage), or ask your operator.",
    ),
  );
}

async function start() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  let session;
  try {
    if (token) {
      // Out of the address bar and the history at once: the token is spent either way.
      history.replaceState(null, "", "#/endpoints");
      session = await openSession(token);
    } else {
      // The view's reads need no CSRF token: they start alongside the session's own read.
      const view = show(false);
      session = await currentSession();
      await view;
    }
  } catch (error) {
    shown += 1; // a view still loading must not replace this
    signedOut(error);
    return;
  }
  const expires = new Date(session.expires_at).toLocaleTimeString();
  const signOut = h("button", { type: "button", class: "sign-out" }, "Sign out");
  signOut.addEventListener("click", async () => {
    await endSession().catch(() => {});
    shown += 1;
    signOut.remove();
    signedOut(new Error("You signed out."));
  });
  fill(byId("workspace"), `Workspace ${session.workspace_id} · session until ${expires}`);
  document.querySelector(".bar")?.append(signOut);
  window.addEventListener("hashchange", () => show(true));
  if (token) await show(false);
}

start();
