import { MongoClient } from "mongodb";
import { loadConfig } from "../src/config.js";
import { Events } from "../src/events/events.js";
import { newEvent, type StoredEvent } from "../src/events/model.js";
import { AGAIN, retry } from "../src/platform/backoff.js";
import { newId } from "../src/platform/ids.js";
import {
  benchWorkspace,
  certificate,
  cpuMs,
  loadAverage,
  post,
  receiver,
  startServer,
} from "./delivery-kit.js";
import { newRunId, startBenchDatabase } from "./environment.js";

/** The recovery once its job has gone through the window (polled, as `waitForRecovery` does). */
async function finished(baseUrl: string, id: string, headers: Record<string, string>) {
  const done = await retry({ firstMs: 20 }, async () => {
    const res = await fetch(`${baseUrl}/open/v1/webhook-recoveries/${id}`, { headers });
    const recovery = (await res.json()) as { status: string; queued: number };
    return recovery.status === "succeeded" ? recovery : AGAIN;
  });
  if (!done) throw new Error(`recovery ${id} did not finish`);
  return done;
}

/**
 * `pnpm bench` (recovery part): an endpoint that missed 10,000 events is recovered, and
 * one ROLE=worker process drains the recovery; next to it, the same worker's drain rate for fresh
 * deliveries (a backlog of API writes queued before it started), in the same run, and the time
 * `recoverWebhookEndpoint` takes to answer (it records the deliveries and schedules the endpoint's
 * lane before it answers, see docs/decisions.md). Then the order a recovery keeps: an endpoint
 * disabled while 2,000 events happen (API writes) is enabled and recovered, with the default
 * WEBHOOK_ENDPOINT_CONCURRENCY, and the bench counts the events that arrive within 50 places of
 * their event order (its lane sends them oldest first, up to that many at once).
 *
 *   BENCH_RECOVERY_EVENTS=10000  missed events to recover
 *   BENCH_FRESH_EVENTS           fresh deliveries drained first (default: as many)
 *   BENCH_ORDER_EVENTS=2000      events the disabled endpoint misses, for the order figure
 *
 * The two backlogs are the same size by default: on the embedded fallback (mongo-java-server)
 * most queries scan their collection, so a drain's rate may depend on the backlog's size.
 */

const MISSED = Number(process.env.BENCH_RECOVERY_EVENTS ?? 10_000);
const FRESH = Number(process.env.BENCH_FRESH_EVENTS ?? MISSED);
const ORDERED = Number(process.env.BENCH_ORDER_EVENTS ?? 2_000);
/** How far from its event's place an arrival may be and still count as in order. */
const PLACES = 50;
const log = (line: string) => process.stderr.write(`[recovery bench] ${line}\n`);

async function main() {
  const startLoad = loadAverage();
  const database = await startBenchDatabase();
  const tls = certificate();
  const target = await receiver(tls);
  const databaseName = `bench_recovery_${newRunId()}`;
  const processes = [startServer(database.uri, databaseName, "api", tls.certFile)];
  const client = await new MongoClient(database.uri).connect();
  try {
    const baseUrl = (await processes[0]?.baseUrl) as string;
    const { id: workspaceId, auth } = await benchWorkspace(baseUrl);
    const since = new Date(Date.now() - 1000).toISOString();
    const endpoint = await post(
      `${baseUrl}/open/v1/webhook-endpoints`,
      { url: target.url, events: ["contact.created"] },
      auth,
    );

    // The missed events: recorded as a relay records them, while the endpoint was down (no
    // delivery made). Written straight into `events`, 1,000 per round trip: only the recovery is
    // measured here, not the writes that made the events.
    const events = new Events(client.db(databaseName), loadConfig({}).eventRetentionMs);
    const missed: StoredEvent[] = [];
    for (let i = 0; i < MISSED; i++) {
      const id = newId("con");
      missed.push(newEvent(workspaceId, "contact.created", { id, object: "contact", name: "Missed" }));
    }
    for (let i = 0; i < missed.length; i += 1000) await events.insertOnce(missed.slice(i, i + 1000));
    const missedIds = missed.map((event) => JSON.parse(event.payload).data.id as string);

    // Fresh deliveries: API writes queued while no worker runs; then one worker joins.
    const fresh: string[] = [];
    for (let i = 0; i < FRESH; i += 16) {
      const batch = await Promise.all(
        Array.from({ length: 16 }, () => post(`${baseUrl}/open/v1/contacts`, { name: "Fresh" }, auth)),
      );
      fresh.push(...batch.map((contact) => contact.id as string));
    }
    const worker = startServer(database.uri, databaseName, "worker", tls.certFile);
    processes.push(worker);
    await worker.delivering;
    const drainOf = async (ids: string[]) => {
      const cpuBefore = cpuMs(worker.child.pid);
      await retry({ firstMs: 50 }, async () => (ids.every((id) => target.arrived.has(id)) ? true : AGAIN));
      const arrivals = ids.map((id) => target.arrived.get(id) as number);
      const seconds = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
      return {
        perSecond: (ids.length - 1) / seconds,
        seconds,
        cpu: (cpuMs(worker.child.pid) - cpuBefore) / ids.length,
      };
    };
    const freshDrain = await drainOf(fresh);
    log(`fresh: ${FRESH} deliveries in ${freshDrain.seconds.toFixed(2)} s by one worker`);

    const asked = performance.now();
    const started = await post(
      `${baseUrl}/open/v1/webhook-endpoints/${endpoint.id}/recover`,
      { since },
      auth,
    );
    const answeredMs = performance.now() - asked;
    // The answer comes at once; the worker's job pages through the window.
    const recovery = await finished(baseUrl, started.id, auth);
    const jobMs = performance.now() - asked;
    if (recovery.queued !== MISSED) throw new Error(`recovery queued ${recovery.queued}, not ${MISSED}`);
    log(
      `recover answered in ${answeredMs.toFixed(0)} ms; its job queued ${recovery.queued} in ${jobMs.toFixed(0)} ms`,
    );
    const recoveryDrain = await drainOf(missedIds);
    log(`recovery: ${MISSED} deliveries in ${recoveryDrain.seconds.toFixed(2)} s by the same worker`);
    // Oldest first: how far the arrival order strays from the events' order (concurrent attempts
    // finish in any order; the queue hands them out oldest first).
    const order = missedIds
      .map((id, i) => ({ i, at: target.arrived.get(id) as number }))
      .sort((a, b) => a.at - b.at)
      .map((x, rank) => Math.abs(x.i - rank));
    const maxStray = Math.max(...order);

    // The order figure: a workspace of its own, whose endpoint is disabled while its events happen.
    const late = await benchWorkspace(baseUrl);
    const lateEndpoint = await post(
      `${baseUrl}/open/v1/webhook-endpoints`,
      { url: target.url, events: ["contact.created"] },
      late.auth,
    );
    const endpointUrl = `${baseUrl}/open/v1/webhook-endpoints/${lateEndpoint.id}`;
    await post(endpointUrl, { status: "disabled" }, late.auth, "PATCH");
    const lateSince = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < ORDERED; i += 16) {
      await Promise.all(
        Array.from({ length: Math.min(16, ORDERED - i) }, () =>
          post(`${baseUrl}/open/v1/contacts`, { name: "Late" }, late.auth),
        ),
      );
    }
    await post(endpointUrl, { status: "enabled" }, late.auth, "PATCH");
    const lateStarted = await post(`${endpointUrl}/recover`, { since: lateSince }, late.auth);
    const lateRecovery = await finished(baseUrl, lateStarted.id, late.auth);
    if (lateRecovery.queued !== ORDERED) {
      throw new Error(`recovery of the disabled endpoint queued ${lateRecovery.queued}, not ${ORDERED}`);
    }
    // The events' order is the one recovery reads them in (by id), from the events collection.
    const lateEvents = await events.collection
      .find({ workspace_id: late.id, type: "contact.created" }, { projection: { payload: 1 } })
      .sort({ _id: 1 })
      .toArray();
    const lateIds = lateEvents.map((event) => JSON.parse(event.payload).data.id as string);
    const lateDrain = await drainOf(lateIds);
    const lateStray = lateIds
      .map((id, i) => ({ i, at: target.arrived.get(id) as number }))
      .sort((a, b) => a.at - b.at)
      .map((x, rank) => Math.abs(x.i - rank));
    const inOrder = lateStray.filter((stray) => stray <= PLACES).length / lateIds.length;
    log(
      `disabled endpoint: ${ORDERED} events recovered in ${lateDrain.seconds.toFixed(2)} s, ${(inOrder * 100).toFixed(1)} % within ${PLACES} places`,
    );

    const ratio = recoveryDrain.perSecond / freshDrain.perSecond;
    process.stdout.write(
      `\nWebhook recovery (${MISSED} missed events to one endpoint, one ROLE=worker process; HTTPS receiver on 127.0.0.1)\n` +
        "| measure | figure | note |\n|---|--:|---|\n" +
        `| recoverWebhookEndpoint answer | ${answeredMs.toFixed(0)} ms | records the recovery and schedules its job |\n` +
        `| recovery job, answer to succeeded | ${jobMs.toFixed(0)} ms | a worker pages through the window and queues ${MISSED} deliveries (its lane sends them meanwhile) |\n` +
        `| recovery drain | ${recoveryDrain.perSecond.toFixed(0)}/s | ${ratio.toFixed(2)}× the fresh drain (target ≥ 0.8×); worker CPU ${recoveryDrain.cpu.toFixed(2)} ms per delivery; arrival order strays ≤ ${maxStray} places from oldest first |\n` +
        `| fresh drain (${FRESH} API writes queued) | ${freshDrain.perSecond.toFixed(0)}/s | worker CPU ${freshDrain.cpu.toFixed(2)} ms per delivery |\n` +
        `| recovery order (${ORDERED} events missed while disabled, default WEBHOOK_ENDPOINT_CONCURRENCY) | ${(inOrder * 100).toFixed(1)} % | arrived within ${PLACES} places of their event order (target ≥ 95 %); at most ${Math.max(...lateStray)} places off; ${lateDrain.perSecond.toFixed(0)}/s |\n` +
        `load average at the end ${loadAverage()} (${startLoad} at the start)\n`,
    );
  } finally {
    for (const p of processes) p.child.kill("SIGTERM");
    await Promise.all(processes.map((p) => p.exited));
    await client.close();
    await target.close();
    await database.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
