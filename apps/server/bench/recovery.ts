import { MongoClient } from "mongodb";
import { loadConfig } from "../src/config.js";
import { Events } from "../src/events/events.js";
import { newEvent, type StoredEvent } from "../src/events/model.js";
import { AGAIN, retry } from "../src/platform/backoff.js";
import { newId } from "../src/platform/ids.js";
import { type Arrivals, arrivalRate, arrivalsOf, writeBacklog } from "./delivery-backlog.js";
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
    const endpoint = await subscribe(baseUrl, target.url, auth);
    const events = new Events(client.db(databaseName), loadConfig({}).eventRetentionMs);
    const missedIds = await recordMissed(events, workspaceId);
    // Fresh deliveries: API writes queued while no worker runs; then one worker joins.
    const fresh = await writeBacklog(
      async () => ({ contactId: (await post(`${baseUrl}/open/v1/contacts`, { name: "Fresh" }, auth)).id }),
      FRESH,
    );
    const worker = startServer(database.uri, databaseName, "worker", tls.certFile);
    processes.push(worker);
    await worker.delivering;
    const site: Site = { baseUrl, target, workerPid: worker.child.pid };
    const freshDrain = await drainOf(site, fresh);
    log(`fresh: ${FRESH} deliveries in ${freshDrain.seconds.toFixed(2)} s by one worker`);
    const recovered = await recoverMissed(site, { id: endpoint.id, since, auth }, missedIds);
    const order = await recoveryOrder(site, events);
    process.stdout.write(formatReport({ freshDrain, recovered, order }, startLoad));
  } finally {
    for (const p of processes) p.child.kill("SIGTERM");
    await Promise.all(processes.map((p) => p.exited));
    await client.close();
    await target.close();
    await database.stop();
  }
}

/** Where the recoveries run: the API, the receiver, and the one worker that delivers. */
interface Site {
  baseUrl: string;
  target: Arrivals & { url: string };
  workerPid: number | undefined;
}

/** An endpoint at `url` for `contact.created`, in the workspace `auth` is a key of. */
const subscribe = (baseUrl: string, url: string, auth: Record<string, string>) =>
  post(`${baseUrl}/open/v1/webhook-endpoints`, { url, events: ["contact.created"] }, auth);

/**
 * The missed events: recorded as a relay records them, while the endpoint was down (no delivery
 * made). Written straight into `events`, 1,000 per round trip: only the recovery is measured
 * here, not the writes that made the events. The contact ids they carry, oldest first.
 */
async function recordMissed(events: Events, workspaceId: string) {
  const missed: StoredEvent[] = [];
  for (let i = 0; i < MISSED; i++) {
    const id = newId("con");
    missed.push(newEvent(workspaceId, "contact.created", { id, object: "contact", name: "Missed" }));
  }
  for (let i = 0; i < missed.length; i += 1000) await events.insertOnce(missed.slice(i, i + 1000));
  return missed.map((event) => JSON.parse(event.payload).data.id as string);
}

/** Once all of `ids` have arrived: the drain's seconds and rate, and the worker's CPU ms per delivery. */
async function drainOf({ target, workerPid }: Site, ids: string[]) {
  const cpuBefore = cpuMs(workerPid);
  const drained = arrivalRate(await arrivalsOf(target, ids));
  return { ...drained, cpu: (cpuMs(workerPid) - cpuBefore) / ids.length };
}

/**
 * How far each of `ids` (in event order) arrived from its place: concurrent attempts finish in
 * any order, while the queue hands them out oldest first.
 */
function strays({ target }: Site, ids: string[]) {
  return ids
    .map((id, i) => ({ i, at: target.arrived.get(id) as number }))
    .sort((a, b) => a.at - b.at)
    .map((x, rank) => Math.abs(x.i - rank));
}

/**
 * The missed events recovered: how soon `recoverWebhookEndpoint` answers, how long its job takes
 * to queue them all, and the same worker's drain of them.
 */
async function recoverMissed(
  site: Site,
  endpoint: { id: string; since: string; auth: Record<string, string> },
  missedIds: string[],
) {
  const asked = performance.now();
  const started = await post(
    `${site.baseUrl}/open/v1/webhook-endpoints/${endpoint.id}/recover`,
    { since: endpoint.since },
    endpoint.auth,
  );
  const answeredMs = performance.now() - asked;
  // The answer comes at once; the worker's job pages through the window.
  const recovery = await finished(site.baseUrl, started.id, endpoint.auth);
  const jobMs = performance.now() - asked;
  if (recovery.queued !== MISSED) throw new Error(`recovery queued ${recovery.queued}, not ${MISSED}`);
  log(
    `recover answered in ${answeredMs.toFixed(0)} ms; its job queued ${recovery.queued} in ${jobMs.toFixed(0)} ms`,
  );
  const drain = await drainOf(site, missedIds);
  log(`recovery: ${MISSED} deliveries in ${drain.seconds.toFixed(2)} s by the same worker`);
  return { answeredMs, jobMs, drain, maxStray: Math.max(...strays(site, missedIds)) };
}

/**
 * The order figure: a workspace of its own, whose endpoint is disabled while its events happen
 * (API writes), then enabled and recovered; the share of arrivals within PLACES of their place.
 */
async function recoveryOrder(site: Site, events: Events) {
  const { baseUrl } = site;
  const late = await benchWorkspace(baseUrl);
  const lateEndpoint = await subscribe(baseUrl, site.target.url, late.auth);
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
  const drain = await drainOf(site, lateIds);
  const lateStray = strays(site, lateIds);
  const inOrder = lateStray.filter((stray) => stray <= PLACES).length / lateIds.length;
  log(
    `disabled endpoint: ${ORDERED} events recovered in ${drain.seconds.toFixed(2)} s, ${(inOrder * 100).toFixed(1)} % within ${PLACES} places`,
  );
  return { inOrder, maxStray: Math.max(...lateStray), drain };
}

/** What one run measured, for its table. */
interface Figures {
  freshDrain: Awaited<ReturnType<typeof drainOf>>;
  recovered: Awaited<ReturnType<typeof recoverMissed>>;
  order: Awaited<ReturnType<typeof recoveryOrder>>;
}

/** The table; `startLoad` is the load average when the run began. */
function formatReport({ freshDrain, recovered, order }: Figures, startLoad: string) {
  const ratio = recovered.drain.perSecond / freshDrain.perSecond;
  return (
    `\nWebhook recovery (${MISSED} missed events to one endpoint, one ROLE=worker process; HTTPS receiver on 127.0.0.1)\n` +
    "| measure | figure | note |\n|---|--:|---|\n" +
    `| recoverWebhookEndpoint answer | ${recovered.answeredMs.toFixed(0)} ms | records the recovery and schedules its job |\n` +
    `| recovery job, answer to succeeded | ${recovered.jobMs.toFixed(0)} ms | a worker pages through the window and queues ${MISSED} deliveries (its lane sends them meanwhile) |\n` +
    `| recovery drain | ${recovered.drain.perSecond.toFixed(0)}/s | ${ratio.toFixed(2)}× the fresh drain (target ≥ 0.8×); worker CPU ${recovered.drain.cpu.toFixed(2)} ms per delivery; arrival order strays ≤ ${recovered.maxStray} places from oldest first |\n` +
    `| fresh drain (${FRESH} API writes queued) | ${freshDrain.perSecond.toFixed(0)}/s | worker CPU ${freshDrain.cpu.toFixed(2)} ms per delivery |\n` +
    `| recovery order (${ORDERED} events missed while disabled, default WEBHOOK_ENDPOINT_CONCURRENCY) | ${(order.inOrder * 100).toFixed(1)} % | arrived within ${PLACES} places of their event order (target ≥ 95 %); at most ${order.maxStray} places off; ${order.drain.perSecond.toFixed(0)}/s |\n` +
    `load average at the end ${loadAverage()} (${startLoad} at the start)\n`
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
