// "Recover": starts a recovery (the server's workers page through the window and queue every
// delivery the endpoint missed), follows it until it has gone through the window, then shows how
// the queued deliveries are going until none is pending.

import { api, get } from "./api.js";
import { announce, field, fill, h, problem } from "./dom.js";

/** @typedef {import("./types.js").WebhookRecovery} WebhookRecovery */

const POLL_MS = 1000;
const POLL_LIMIT = 120;

/** A datetime-local value (the browser's time zone) for `date`. */
function localInput(/** @type {Date} */ date) {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

/**
 * Follows the recovery's own deliveries, counted by status on the recovery (`deliveries`), until
 * none is pending: one request a second, however many it queued.
 * @param {WebhookRecovery} recovery
 * @param {HTMLElement} output
 * @param {() => Promise<unknown>} done
 */
async function follow(recovery, output, done) {
  let current = recovery;
  for (let poll = 0; poll < POLL_LIMIT; poll += 1) {
    if (!output.isConnected) return;
    const counts = current.deliveries;
    fill(
      output,
      `Recovery: ${current.queued} queued · ${counts.succeeded} succeeded · ${counts.failed} failed · ${counts.pending} pending`,
    );
    if (counts.pending === 0) {
      announce(`Recovery finished: ${counts.succeeded} succeeded, ${counts.failed} failed.`);
      await done();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    current = await get(`webhook-recoveries/${current.id}`);
  }
}

/**
 * Polls the recovery until the workers have gone through its window; the recovery as it ended.
 * @param {WebhookRecovery} recovery
 * @param {HTMLElement} output
 * @returns {Promise<WebhookRecovery>}
 */
async function scanned(recovery, output) {
  let current = recovery;
  for (let poll = 0; poll < POLL_LIMIT && current.status !== "succeeded"; poll += 1) {
    if (!output.isConnected) return current;
    fill(
      output,
      `Recovery: ${current.status}, ${current.scanned} events looked at, ${current.queued} queued.`,
    );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS / 4));
    current = await get(`webhook-recoveries/${current.id}`);
  }
  return current;
}

/**
 * What a recovery of the window would queue (its dry run), said before anything is queued, with
 * the button that queues it.
 * @param {import("./types.js").WebhookEndpoint} endpoint
 * @param {{ since: string }} body
 * @param {HTMLElement} output
 * @param {() => Promise<unknown>} start
 */
async function preview(endpoint, body, output, start) {
  /** @type {import("./types.js").WebhookRecoveryPreview} */
  const would = await api("POST", `webhook-endpoints/${endpoint.id}/recover`, {
    body: { ...body, dry_run: true },
  });
  const { total, failed, dropped, never_sent } = would.would_queue;
  if (total === 0) {
    fill(output, "Nothing to recover: the endpoint received every event of that window.");
    return;
  }
  const queue = h("button", { type: "button", class: "primary" }, `Queue ${total}`);
  queue.addEventListener("click", () => {
    queue.disabled = true;
    start();
  });
  fill(
    output,
    `Would queue ${total}: ${failed} failed, ${dropped} dropped, ${never_sent} never sent (since ${new Date(would.since).toLocaleString([], { timeZoneName: "short" })}). `,
    queue,
  );
  queue.focus();
}

/**
 * Queues the recovery and follows it: through its window, then its deliveries until none is pending.
 * @param {import("./types.js").WebhookEndpoint} endpoint
 * @param {{ since: string }} body
 * @param {HTMLElement} progress
 * @param {() => Promise<unknown>} done
 */
async function startRecovery(endpoint, body, progress, done) {
  /** @type {WebhookRecovery} */
  const started = await api("POST", `webhook-endpoints/${endpoint.id}/recover`, { body });
  const recovery = await scanned(started, progress);
  fill(progress, `Recovery: ${recovery.queued} queued.`);
  announce(`Recovery started: ${recovery.queued} deliveries queued.`);
  if (recovery.queued > 0) await follow(recovery, progress, done);
}

/**
 * @param {import("./types.js").WebhookEndpoint} endpoint
 * @param {() => Promise<unknown>} done
 */
export function recoverSection(endpoint, done) {
  const since = h("input", {
    type: "datetime-local",
    name: "since",
    required: true,
    value: localInput(new Date(Date.now() - 3_600_000)),
  });
  const progress = h("p", { class: "progress", role: "status" });
  const errors = h("div", {});
  const form = h(
    "form",
    { class: "filters" },
    field(
      "Since",
      since,
      "Shows what it would queue first: every event since then (and since the endpoint exists) that it did not receive: failed, dropped, or missed while paused.",
    ),
    h("button", { type: "submit", disabled: endpoint.status === "disabled" }, "Recover"),
    endpoint.status === "disabled"
      ? h(
          "p",
          { class: "hint" },
          "A disabled endpoint receives nothing: resume or enable it first, then recover.",
        )
      : null,
  );
  const failed = (/** @type {unknown} */ error) => errors.append(problem(error));
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    errors.replaceChildren();
    const body = { since: new Date(since.value).toISOString() };
    const start = () => startRecovery(endpoint, body, progress, done).catch(failed);
    await preview(endpoint, body, progress, start).catch(failed);
  });
  return h(
    "section",
    { "aria-labelledby": "recover-heading" },
    h("h2", { id: "recover-heading" }, "Recover missed deliveries"),
    form,
    progress,
    errors,
  );
}
