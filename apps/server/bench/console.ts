import { MongoClient } from "mongodb";
import { loadConsoleAssets } from "../src/console/assets.js";
import { newId } from "../src/platform/ids.js";
import {
  type DeliveryStatus,
  pendingKey,
  type WebhookDeliveryDoc,
} from "../src/webhooks/deliveries/store.js";
import { launchChromium } from "../test/helpers/browser.js";
import { ADMIN_TOKEN, benchWorkspace, certificate, loadAverage, post, startServer } from "./delivery-kit.js";
import { newRunId, startBenchDatabase } from "./environment.js";

/**
 * `pnpm bench` (console part): the webhook console's weight and speed.
 *
 * - Weight: its JavaScript and CSS, gzipped as the server sends them; the budget is 150 KB.
 * - Speed: an endpoint with 10,000 deliveries over the last 24 hours, its page opened afresh in
 *   Chromium (a full load, the session already open) BENCH_CONSOLE_RUNS times; the time from the
 *   navigation's start to the first screen (the chart drawn and the first deliveries listed), as
 *   the browser's own clock (`performance.now()`) reads it. The target is under 1 s.
 *
 *   BENCH_CONSOLE_DELIVERIES=10000  deliveries of the endpoint
 *   BENCH_CONSOLE_RUNS=10           page loads measured
 *   CONSOLE_SCREENSHOT=<file.png>   also saves the page as it looks (README's picture)
 */

const DELIVERIES = Number(process.env.BENCH_CONSOLE_DELIVERIES ?? 10_000);
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 10);
const WEIGHT_BUDGET = 150 * 1024;
const FIRST_SCREEN_TARGET_MS = 1000;
const HOUR_MS = 3_600_000;
const log = (line: string) => process.stderr.write(`[console bench] ${line}\n`);

/** The console's JavaScript and CSS, gzipped bytes in total and per file. */
async function weight(): Promise<{ total: number; files: string[] }> {
  const assets = [...(await loadConsoleAssets())].filter(([name]) => /\.(js|css)$/.test(name));
  const files = assets.map(([name, asset]) => `${name} ${asset.gzipped.length} B`);
  return { total: assets.reduce((sum, [, asset]) => sum + asset.gzipped.length, 0), files };
}

/** A day of deliveries, oldest first: mostly succeeded, a failing stretch, a few pending and dropped. */
function dayOfDeliveries(workspaceId: string, endpointId: string, now: number): WebhookDeliveryDoc[] {
  const start = now - 24 * HOUR_MS + 60_000;
  return Array.from({ length: DELIVERIES }, (_, index) => {
    const at = start + Math.floor((index / DELIVERIES) * (24 * HOUR_MS - 120_000));
    const hour = Math.floor((at - start) / HOUR_MS);
    const outage = hour >= 15 && hour <= 17;
    const status: DeliveryStatus =
      index >= DELIVERIES - 3
        ? "pending"
        : outage && index % 3
          ? "failed"
          : index % 997 === 0
            ? "dropped"
            : "succeeded";
    const created = new Date(at);
    const [id, eventId] = [newId("dlv", at), newId("evt", at)];
    return {
      _id: id,
      pending_key: status === "pending" ? pendingKey(endpointId, eventId) : `settled ${id}`,
      workspace_id: workspaceId,
      event_id: eventId,
      event_type: index % 4 ? "contact.updated" : "ticket.created",
      endpoint_id: endpointId,
      status,
      attempts: status === "failed" ? 5 : 1,
      last_attempt_at: status === "pending" ? null : created,
      last_status_code: status === "failed" ? 503 : status === "succeeded" ? 200 : null,
      next_attempt_at: null,
      created_at: created,
      updated_at: created,
      origin: "event",
      due_at: null,
      lease_holder: null,
    };
  });
}

/** Notes `performance.now()` (ms since the navigation started) once the chart and a delivery row are there. */
const FIRST_SCREEN_PROBE = `
  new MutationObserver((changes, observer) => {
    if (document.querySelector("tr[data-delivery]") && document.querySelector("svg.chart rect")) {
      window.__firstScreen = performance.now();
      observer.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
`;

/** How long each of `runs` calls of `work` took, in ms, sorted. */
async function timed(runs: number, work: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

async function firstScreens(consoleUrl: string, endpointUrl: string): Promise<number[]> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(consoleUrl);
    await page.getByRole("heading", { name: "Webhook endpoints" }).waitFor();
    // Written into each page before its own scripts (through the browser's debugging protocol, so
    // the page's CSP does not apply): the instant the first screen is complete, in the page's clock.
    await page.addInitScript({ content: FIRST_SCREEN_PROBE });
    const times: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      await page.goto("about:blank");
      await page.goto(endpointUrl, { waitUntil: "commit" });
      // A function, not a string: the page's CSP forbids evaluating strings.
      const ready = await page.waitForFunction(
        () => (globalThis as { __firstScreen?: number }).__firstScreen,
        null,
        { timeout: 30_000 },
      );
      times.push(Number(await ready.jsonValue()));
    }
    // Where the last load's time went: each request's start and end, in the page's clock.
    const requests = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .map(
          (entry) =>
            `${new URL(entry.name).pathname.replace("/console/", "")} ${entry.startTime.toFixed(0)}–${(entry as unknown as { responseEnd: number }).responseEnd.toFixed(0)}`,
        ),
    );
    log(`last load's requests (ms): ${requests.join(", ")}`);
    if (process.env.CONSOLE_SCREENSHOT) {
      // Tall enough for the chart, the recovery and the first deliveries.
      await page.setViewportSize({ width: 1280, height: 1400 });
      await page.screenshot({ path: process.env.CONSOLE_SCREENSHOT });
      log(`screenshot: ${process.env.CONSOLE_SCREENSHOT}`);
    }
    return times;
  } finally {
    await browser.close();
  }
}

async function main() {
  const startLoad = loadAverage();
  const { total, files } = await weight();
  const database = await startBenchDatabase();
  const databaseName = `bench_console_${newRunId()}`;
  const server = startServer(database.uri, databaseName, "api", certificate().certFile);
  const client = await new MongoClient(database.uri).connect();
  try {
    const baseUrl = (await server.baseUrl) as string;
    const { id: workspaceId, auth } = await benchWorkspace(baseUrl);
    const endpoint = await post(
      `${baseUrl}/open/v1/webhook-endpoints`,
      { url: "https://crm.example.invalid/hooks/deskline", description: "CRM sync" },
      auth,
    );
    const db = client.db(databaseName);
    await db
      .collection<WebhookDeliveryDoc>("webhook_deliveries")
      .insertMany(dayOfDeliveries(workspaceId, endpoint.id, Date.now()));
    const session = await post(
      `${baseUrl}/admin/v1/workspaces/${workspaceId}/console-sessions`,
      {},
      {
        authorization: `Bearer ${ADMIN_TOKEN}`,
      },
    );
    const statsMs = await timed(RUNS, () =>
      fetch(`${baseUrl}/open/v1/webhook-endpoints/${endpoint.id}/stats`, { headers: auth }).then((r) =>
        r.json(),
      ),
    );
    log(`GET …/stats alone (10,000 deliveries), from Node: p50 ${percentile(statsMs, 0.5).toFixed(0)} ms`);
    const times = (
      await firstScreens(session.url as string, `${baseUrl}/console/#/endpoints/${endpoint.id}`)
    ).sort((a, b) => a - b);
    const p50 = percentile(times, 0.5);
    const worst = times.at(-1) ?? 0;
    const lines = [
      `console weight: ${(total / 1024).toFixed(1)} KB gzipped JS+CSS (budget ${WEIGHT_BUDGET / 1024} KB): ${files.join(", ")}`,
      `endpoint page with ${DELIVERIES} deliveries, first screen over ${RUNS} loads: p50 ${p50.toFixed(0)} ms, max ${worst.toFixed(0)} ms (target < ${FIRST_SCREEN_TARGET_MS} ms)`,
      `load average ${startLoad} at start, ${loadAverage()} at end`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (total > WEIGHT_BUDGET) throw new Error("the console's JavaScript and CSS are over their budget");
    if (p50 >= FIRST_SCREEN_TARGET_MS)
      log(`first screen p50 ${p50.toFixed(0)} ms is over the ${FIRST_SCREEN_TARGET_MS} ms target`);
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
    await client.close();
    await database.stop();
  }
}

await main();
